"""The pictures of a training run, under their old name: the code is in the package,
``torchlight/examples/plots.py`` (the CNN's own are ``plots_cnn.py`` beside it).

``from project import plots`` gives that very module.
"""

import sys

from torchlight.examples import plots

sys.modules[__name__] = plots
