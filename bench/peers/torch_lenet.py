"""torch_lenet.py — the one PyTorch LeNet of the tests and benchmarks, and its optimizer recipe.

The network is trainer/models.cpp's `lenet` preset (Caffe's LeNet: no ReLU after the
convolutions): conv 20@5x5, maxpool 2, conv 50@5x5, maxpool 2, flatten, dense 500, relu, dense
classes, on 1x28x28 inputs. Its layers are built in that order, so a seeded torch.manual_seed draws
the same initial weights wherever it is built. The recipe is Caffe's lenet_solver, which
tests/trainer/lenet_config.h gives the C++ side: SGD, learning rate 0.01, momentum 0.9, weight
decay 5e-4.

Scripts in other folders import it by putting this folder on sys.path first:
    sys.path.insert(0, os.path.join(<repository>, "bench", "peers"))
"""
import torch.nn as nn

LEARNING_RATE = 0.01
MOMENTUM = 0.9
WEIGHT_DECAY = 5e-4


def lenet(classes=10):
    return nn.Sequential(
        nn.Conv2d(1, 20, 5), nn.MaxPool2d(2, 2),
        nn.Conv2d(20, 50, 5), nn.MaxPool2d(2, 2),
        nn.Flatten(), nn.Linear(800, 500), nn.ReLU(), nn.Linear(500, classes))
