import torchlight as torch

# A small convolutional network that learns to read handwritten digits, in the shape of PyTorch's
# beginner tutorials ("Build the Neural Network", "Optimizing Model Parameters", "Save and Load
# the Model", and the CIFAR-10 classifier): a Dataset and a DataLoader, an nn.Module, a training
# loop with train()/eval(), accuracy under no_grad(), and the weights saved, loaded into a fresh
# model and checked. The same file runs on PyTorch with the first line changed to ``import torch``.
#
#     python project/examples/cnn_classifier.py
#
# ``from torch import nn`` would import a package named torch whatever the first line says, so
# this file reaches nn and DataLoader through the name ``torch``.
# isort: split
import argparse
import os
import tempfile

from torchlight.datasets import Digits  # numpy arrays: .data (N, 8, 8) in [0, 1], .targets (N,)

# --help prints what the program does and exits; it takes no options (usage=SUPPRESS keeps a
# mistake to one line on stderr, with exit status 2).
argparse.ArgumentParser(
    description="Train a small CNN on the Digits images, save and reload it (PyTorch's beginner tutorials).",
    usage=argparse.SUPPRESS,
).parse_args()

nn = torch.nn
DataLoader = torch.utils.data.DataLoader
TensorDataset = torch.utils.data.TensorDataset

torch.manual_seed(0)


def tensors(split):
    """The images as an (N, 1, 8, 8) float tensor and the labels as an int64 tensor."""
    images = torch.from_numpy(split.data).float().unsqueeze(1)
    labels = torch.from_numpy(split.targets)
    return images, labels


train_images, train_labels = tensors(Digits(train=True))
test_images, test_labels = tensors(Digits(train=False))
# A subset keeps the example quick: 600 training images, the whole test set (355)
train_data = TensorDataset(train_images[:600], train_labels[:600])
test_data = TensorDataset(test_images, test_labels)
train_loader = DataLoader(train_data, batch_size=32, shuffle=True)
test_loader = DataLoader(test_data, batch_size=128)


class DigitNet(nn.Module):
    def __init__(self):
        """Two 3x3 convolutions, each followed by ReLU, a pooling halves the picture, then a linear layer."""
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=3, padding=1),  # (N, 8, 8, 8)
            nn.ReLU(),
            nn.MaxPool2d(2),  # (N, 8, 4, 4)
            nn.Conv2d(8, 16, kernel_size=3, padding=1),  # (N, 16, 4, 4)
            nn.ReLU(),
            nn.MaxPool2d(2),  # (N, 16, 2, 2)
        )
        self.flatten = nn.Flatten()
        self.classifier = nn.Linear(16 * 2 * 2, 10)

    def forward(self, x):
        """One score (logit) per digit for every image in x."""
        return self.classifier(self.flatten(self.features(x)))


def train_loop(loader, model, loss_fn, optimizer):
    """One pass over the training data; the mean loss over its batches."""
    model.train()
    total = 0.0
    for images, labels in loader:
        loss = loss_fn(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(loader)


def test_loop(loader, model):
    """The fraction of images in loader whose highest score is their label."""
    model.eval()
    correct = 0
    with torch.no_grad():
        for images, labels in loader:
            correct += (model(images).argmax(1) == labels).sum().item()
    return correct / len(loader.dataset)


model = DigitNet()
print(model)
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

for epoch in range(3):
    final_loss = train_loop(train_loader, model, loss_fn, optimizer)
    accuracy = test_loop(test_loader, model)
    print(f"epoch {epoch + 1}: training loss {final_loss:.4f}, test accuracy {100 * accuracy:.1f}%")

# Save the weights, load them into a fresh model, and check that it scores the same
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "digits.pt")
    torch.save(model.state_dict(), path)
    restored = DigitNet()
    restored.load_state_dict(torch.load(path))
restored.eval()
with torch.no_grad():
    same = torch.allclose(restored(test_images), model(test_images))
print(f"restored model gives the same outputs: {same}")
print(f"final loss {final_loss}")
