"""A tiny value model fitted with numpy: logistic regression (no hidden layer) or one tanh
layer, trained on soft targets (search win shares) by cross-entropy with full-batch Adam, from
a seeded initialisation; the input standardisation is folded into the first layer, so the
compiled search applies the weights to the raw features. Beside it, a linear points head
(ridge regression of the search's expected final points)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hortus.search.evaluation import FORMAT, VERSION, checksum
from hortus.training.data import Sample


@dataclass(frozen=True)
class Fit:
    hidden: int
    w1: list[list[float]]
    b1: list[float]
    w2: list[float]
    b2: float
    train_r2: float
    validation_r2: float
    validation_mse: float
    constant_mse: float
    samples: int
    points_w: list[float] | None = None
    """The expected-final-points head over the raw features (None: samples without points)."""
    points_b: float = 0.0
    points_validation_r2: float = 0.0


def _forward(x: np.ndarray, params: dict[str, np.ndarray], hidden: int) -> tuple[np.ndarray, np.ndarray]:
    h = np.tanh(x @ params["w1"].T + params["b1"]) if hidden else x
    return 1.0 / (1.0 + np.exp(-(h @ params["w2"] + params["b2"]))), h


def _r2(y: np.ndarray, p: np.ndarray) -> float:
    total = float(((y - y.mean()) ** 2).sum())
    return 1.0 - float(((y - p) ** 2).sum()) / total if total > 0 else 0.0


def fit_value_model(
    samples: list[Sample], hidden: int = 0, seed: int = 1, steps: int = 3000, learning_rate: float = 0.03, l2: float = 1e-4
) -> Fit:
    """Fit on the samples of games whose index % 5 != 0, validate on the others."""
    if not samples:
        raise ValueError("no training samples")
    x = np.array([s.features for s in samples], dtype=np.float64)
    y = np.array([s.target for s in samples], dtype=np.float64)
    held = np.array([s.game_index % 5 == 0 for s in samples])
    if held.all() or not held.any():
        held = np.arange(len(samples)) % 5 == 0
    mean = x[~held].mean(axis=0)
    scale = x[~held].std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = (x - mean) / scale
    rng = np.random.default_rng(seed)
    n_features = x.shape[1]
    params = {
        "w1": rng.normal(0.0, 1.0 / np.sqrt(n_features), (hidden, n_features)),
        "b1": np.zeros(hidden),
        "w2": rng.normal(0.0, 0.1, hidden or n_features),
        "b2": np.zeros(()),
    }
    moments = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in params.items()}
    zt, yt = z[~held], y[~held]
    for step in range(1, steps + 1):
        p, h = _forward(zt, params, hidden)
        d = (p - yt) / len(yt)  # d(cross-entropy)/d(logit)
        grads = {"w2": h.T @ d + l2 * params["w2"], "b2": np.array(d.sum())}
        if hidden:
            dh = np.outer(d, params["w2"]) * (1.0 - h * h)
            grads["w1"] = dh.T @ zt + l2 * params["w1"]
            grads["b1"] = dh.sum(axis=0)
        for k, g in grads.items():
            m, v = moments[k]
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            params[k] = params[k] - learning_rate * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    p_train = _forward(zt, params, hidden)[0]
    p_val = _forward(z[held], params, hidden)[0]
    # Fold the standardisation into the first layer: w (x - mean) / scale = (w / scale) x - w.mean/scale.
    if hidden:
        w1 = params["w1"] / scale
        b1 = params["b1"] - w1 @ mean
        w2, b2 = params["w2"], float(params["b2"])
    else:
        w1, b1 = np.zeros((0, n_features)), np.zeros(0)
        w2 = params["w2"] / scale
        b2 = float(params["b2"] - w2 @ mean)
    yv = y[held]
    points: dict[str, Any] = {}
    if all(s.points is not None for s in samples):
        points = _fit_points(z, np.array([s.points for s in samples], dtype=np.float64), held, mean, scale)
    return Fit(
        hidden=hidden,
        w1=w1.tolist(),
        b1=b1.tolist(),
        w2=w2.tolist(),
        b2=b2,
        train_r2=_r2(yt, p_train),
        validation_r2=_r2(yv, p_val),
        validation_mse=float(((yv - p_val) ** 2).mean()),
        constant_mse=float(((yv - yt.mean()) ** 2).mean()),
        samples=len(samples),
        **points,
    )


def _fit_points(
    z: np.ndarray, points: np.ndarray, held: np.ndarray, mean: np.ndarray, scale: np.ndarray, l2: float = 1e-3
) -> dict[str, Any]:
    """The points head: ridge regression of the final points on the standardised features
    (closed form, so it adds no randomness and leaves the value fit as it was), folded back to
    the raw features like the first layer."""
    zt = np.hstack([z[~held], np.ones((int((~held).sum()), 1))])
    penalty = l2 * len(zt) * np.eye(zt.shape[1])
    penalty[-1, -1] = 0.0  # the intercept is not shrunk
    coef = np.linalg.solve(zt.T @ zt + penalty, zt.T @ points[~held])
    w = coef[:-1] / scale
    b = float(coef[-1] - w @ mean)
    predicted = z[held] @ coef[:-1] + coef[-1]
    return {"points_w": w.tolist(), "points_b": b, "points_validation_r2": _r2(points[held], predicted)}


def model_document(
    game: str, fit: Fit, features: int, eval_plies: int, default: bool, training: dict[str, Any]
) -> dict[str, Any]:
    """The model file's contents (``hortus.search.evaluation`` format), checksummed."""
    doc: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "game": game,
        "features": features,
        "hidden": fit.hidden,
        "w1": fit.w1,
        "b1": fit.b1,
        "w2": fit.w2,
        "b2": fit.b2,
        "eval_plies": eval_plies,
        "default": default,
        "training": {
            **training,
            "samples": fit.samples,
            "train_r2": round(fit.train_r2, 4),
            "validation_r2": round(fit.validation_r2, 4),
            "validation_mse": round(fit.validation_mse, 5),
            "constant_mse": round(fit.constant_mse, 5),
        },
    }
    if fit.points_w is not None:
        doc["points_w"] = fit.points_w
        doc["points_b"] = fit.points_b
        doc["training"]["points_validation_r2"] = round(fit.points_validation_r2, 4)
    doc["sha256"] = checksum(doc)
    return doc
