"""Module 4: MNIST and FashionMNIST from their IDX files, with torchvision's interface.

Both are 70,000 grey 28x28 images in 10 classes (60,000 train, 10,000 test), stored as four IDX
files: ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``, ``t10k-images-idx3-ubyte``,
``t10k-labels-idx1-ubyte`` (each possibly ``.gz``). They are looked for in ``root/<Name>/raw``
(where torchvision and ``download=True`` put them) and then in ``root`` itself.
"""

import os
from typing import Dict, List, Tuple, Union

import numpy as np

from .base import ArrayDataset, Transform
from .download import download as _download
from .idx import read_idx

PathLike = Union[str, "os.PathLike[str]"]


class MNIST(ArrayDataset):
    """The MNIST handwritten digits (LeCun, Cortes and Burges): ``.data`` (N, 28, 28) in [0, 1].

    The 60,000 training or the 10,000 test images, read from the IDX files in ``root/MNIST/raw``
    or ``root``. Items are ``(image tensor (1, 28, 28), int label)``.

    :param root: the folder that holds the files.
    :param train: the training set (True) or the test set (False).
    :param transform: a function applied to each image tensor as it is read (None: none).
    :param target_transform: a function applied to each int label (None: none).
    :param download: first fetch the files that are missing into ``root/MNIST/raw``, from the first of
        ``mirrors`` that serves them with the SHA-256 that ``resources`` lists.
    """

    # torchvision's mirror first; both serve the same bytes.
    mirrors: List[str] = [
        "https://ossci-datasets.s3.amazonaws.com/mnist/",
        "https://storage.googleapis.com/cvdf-datasets/mnist/",
    ]
    # (file, SHA-256). torchvision checks these same files by MD5 (f68b3c2d..., d53e105e...,
    # 9fb629c4..., ec29112d...); the SHA-256 values are TensorFlow Datasets' published checksums
    # (tensorflow_datasets/url_checksums/mnist.txt), for the same file sizes.
    resources: List[Tuple[str, str]] = [
        ("train-images-idx3-ubyte.gz", "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609"),
        ("train-labels-idx1-ubyte.gz", "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c"),
        ("t10k-images-idx3-ubyte.gz", "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"),
        ("t10k-labels-idx1-ubyte.gz", "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"),
    ]
    # Each file's size in bytes: a server sending more (plus a small margin) is cut off.
    sizes: Dict[str, int] = {
        "train-images-idx3-ubyte.gz": 9912422,
        "train-labels-idx1-ubyte.gz": 28881,
        "t10k-images-idx3-ubyte.gz": 1648877,
        "t10k-labels-idx1-ubyte.gz": 4542,
    }
    classes = [
        "0 - zero",
        "1 - one",
        "2 - two",
        "3 - three",
        "4 - four",
        "5 - five",
        "6 - six",
        "7 - seven",
        "8 - eight",
        "9 - nine",
    ]

    def __init__(
        self,
        root: PathLike,
        train: bool = True,
        transform: Transform = None,
        target_transform: Transform = None,
        download: bool = False,
    ):
        name = type(self).__name__
        if not isinstance(root, (str, os.PathLike)):
            raise TypeError(f"{name}(root): expected a folder path (str or os.PathLike), got {type(root).__name__}")
        if not isinstance(train, bool):
            raise TypeError(f"{name}(train=...): expected True (training set) or False (test set), got {train!r}")
        self.root = os.path.expanduser(os.fspath(root))
        self.train: bool = train
        if download:
            self.download()
        prefix = "train" if train else "t10k"
        images_path = self._find(f"{prefix}-images-idx3-ubyte")
        labels_path = self._find(f"{prefix}-labels-idx1-ubyte")
        images = read_idx(images_path)
        labels = read_idx(labels_path)
        if images.ndim != 3 or images.dtype != np.uint8:
            raise ValueError(
                f"{images_path}: expected images, a 3-D IDX array of unsigned bytes (N, H, W), "
                f"got {images.ndim}-D {images.dtype.name} of shape {images.shape}"
            )
        if labels.ndim != 1:
            raise ValueError(f"{labels_path}: expected labels, a 1-D IDX array, got shape {labels.shape}")
        if len(images) != len(labels):
            raise ValueError(
                f"{name}: {images_path} has {len(images)} images but {labels_path} has {len(labels)} labels"
            )
        if len(labels) and (labels.min() < 0 or labels.max() >= len(self.classes)):
            raise ValueError(
                f"{labels_path}: labels must lie in 0..{len(self.classes) - 1}, found {labels.min()}..{labels.max()}"
            )
        super().__init__(images / 255.0, labels, transform, target_transform)

    @property
    def raw_folder(self) -> str:
        """``root/<Name>/raw``, where ``download=True`` puts the files."""
        return os.path.join(self.root, type(self).__name__, "raw")

    def _candidates(self, stem: str) -> List[str]:
        return [os.path.join(folder, stem + ext) for folder in (self.raw_folder, self.root) for ext in ("", ".gz")]

    def _find(self, stem: str) -> str:
        """The path of the IDX file ``stem`` (or ``stem.gz``) in the raw folder or in root."""
        candidates = self._candidates(stem)
        for path in candidates:
            if os.path.isfile(path):
                return path
        raise FileNotFoundError(
            f"{type(self).__name__}: {stem} not found; looked for {', '.join(candidates)}. "
            "Pass download=True to fetch it, or put the IDX files in one of those places."
        )

    def download(self) -> None:
        """Fetch the files of ``resources`` that are not present yet into ``raw_folder``."""
        for filename, sha256 in self.resources:
            stem = filename[: -len(".gz")] if filename.endswith(".gz") else filename
            if any(os.path.isfile(path) for path in self._candidates(stem)):
                continue
            os.makedirs(self.raw_folder, exist_ok=True)
            urls = [mirror + filename for mirror in self.mirrors]
            _download(urls, os.path.join(self.raw_folder, filename), sha256, size=self.sizes.get(filename))

    def _describe(self) -> List[str]:
        return [f"Root location: {self.root}", f"Split: {'Train' if self.train else 'Test'}"]


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST (Xiao, Rasul and Vollgraf): MNIST's format with 10 kinds of clothing.

    Files in ``root/FashionMNIST/raw`` or ``root``. Items are ``(image tensor (1, 28, 28), int label)``.

    :param root: the folder that holds the files.
    :param train: the training set (True) or the test set (False).
    :param transform: a function applied to each image tensor as it is read (None: none).
    :param target_transform: a function applied to each int label (None: none).
    :param download: first fetch the files that are missing into ``root/FashionMNIST/raw``, from Zalando's
        S3 bucket.
    """

    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    # (file, SHA-256): TensorFlow Datasets' published checksums (url_checksums/fashion_mnist.txt);
    # torchvision checks the same files by MD5 (8d4fb7e6..., 25c81989..., bef4ecab..., bb300cfd...).
    resources = [
        ("train-images-idx3-ubyte.gz", "3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84"),
        ("train-labels-idx1-ubyte.gz", "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845"),
        ("t10k-images-idx3-ubyte.gz", "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073"),
        ("t10k-labels-idx1-ubyte.gz", "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5"),
    ]
    sizes = {
        "train-images-idx3-ubyte.gz": 26421880,
        "train-labels-idx1-ubyte.gz": 29515,
        "t10k-images-idx3-ubyte.gz": 4422102,
        "t10k-labels-idx1-ubyte.gz": 5148,
    }
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]
