"""sweep_trial: the Python side of an external-command trial of `sweep run` (standard library only).

A program that `trainer.command` starts reads its hyperparameters and reports its metrics with it:

    import sweep_trial

    p = sweep_trial.params()                    # {"training.learning_rate": 0.01, "batch_size": 64}
    lr = p["training.learning_rate"]            # or p["training"]["learning_rate"]
    for epoch in range(1, epochs + 1):
        ...
        sweep_trial.log(epoch=epoch, step=step, train_loss=loss, val_accuracy=acc)
    torch.save(model.state_dict(), sweep_trial.checkpoint_path("model.pt"))

sweep puts this module's directory on PYTHONPATH for every command trial, and passes the trial
through the environment (names as in the C++ header scheduler/trial_environment.h):

    SWEEP_PARAMS        the trial's swept parameters, one JSON object named as in sweep.parameters
    SWEEP_TRIAL_ID      the trial's id in the sweep's database
    SWEEP_TRIAL_NUMBER  its number in the sweep, from 0 (runs/NAME/trials/NNN/)
    SWEEP_TRIAL_NAME    its parameters as the live table shows them ("learning_rate=0.01")
    SWEEP_TRIAL_DIR     its own directory, for checkpoints and other files
    SWEEP_TRIAL_SEED    its seed ({seed} in the command)
    SWEEP_SWEEP_NAME    the sweep's name
    SWEEP_SWEEP_DIR     the sweep's directory, absolute (runs/NAME/)
    SWEEP_DEVICE        the slot it runs on: "cpu:0", "cuda:1" (CUDA_VISIBLE_DEVICES holds its GPUs)

Outside a sweep (SWEEP_PARAMS unset) params() raises RuntimeError, unless a default is given:
params(default={...}) returns the default there, so the same script also runs on its own.
"""

import json
import math
import numbers
import operator
import os
import sys
import threading

__all__ = ["Params", "params", "log", "in_sweep", "trial_id", "trial_number", "trial_name",
           "trial_dir", "checkpoint_path", "seed", "sweep_name", "sweep_dir", "device",
           "torch_device"]

PARAMS = "SWEEP_PARAMS"
TRIAL_ID = "SWEEP_TRIAL_ID"
TRIAL_NUMBER = "SWEEP_TRIAL_NUMBER"
TRIAL_NAME = "SWEEP_TRIAL_NAME"
TRIAL_DIR = "SWEEP_TRIAL_DIR"
TRIAL_SEED = "SWEEP_TRIAL_SEED"
SWEEP_NAME = "SWEEP_SWEEP_NAME"
SWEEP_DIR = "SWEEP_SWEEP_DIR"
DEVICE = "SWEEP_DEVICE"

MAX_STEP = 2 ** 53  # the largest step sweep accepts: every integer up to it is exact in a double

_write_lock = threading.Lock()


class Params(dict):
    """The trial's parameters by their names in sweep.parameters, with their YAML types.

    A dotted name may also be read one part at a time: p["training"]["learning_rate"] is
    p["training.learning_rate"]; p.get(name, default) does the same.
    """

    def __missing__(self, key):
        prefix = str(key) + "."
        inner = {k[len(prefix):]: v for k, v in self.items() if k.startswith(prefix)}
        if not inner:
            raise KeyError(key)
        return Params(inner)

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default


def _outside(what, variable):
    return RuntimeError(
        f"sweep_trial.{what}: {variable} is not set: this program is not running as a trial of "
        "`sweep run` (start it through a sweep config's trainer.command"
        + (", or give params(default={...}))" if variable == PARAMS else ")"))


def in_sweep():
    """True when this program runs as a trial of `sweep run`."""
    return PARAMS in os.environ


_NO_DEFAULT = object()


def params(default=_NO_DEFAULT):
    """The trial's swept parameters as a Params dict.

    Outside a sweep: `default` (as a Params) when given, else RuntimeError.
    """
    text = os.environ.get(PARAMS)
    if text is None:
        if default is _NO_DEFAULT:
            raise _outside("params()", PARAMS)
        return Params(default)
    try:
        value = json.loads(text)
    except ValueError as e:
        raise RuntimeError(f"sweep_trial.params(): {PARAMS} is not JSON ({e}): {text[:200]}")
    if not isinstance(value, dict):
        raise RuntimeError(f"sweep_trial.params(): {PARAMS} is not a JSON object: {text[:200]}")
    return Params(value)


def _env(name, what):
    value = os.environ.get(name)
    if value is None:
        raise _outside(what, name)
    return value


def trial_id():
    """The trial's id in the sweep's database (int)."""
    return int(_env(TRIAL_ID, "trial_id()"))


def trial_number():
    """The trial's number in the sweep, from 0 (int)."""
    return int(_env(TRIAL_NUMBER, "trial_number()"))


def trial_name():
    """The trial's parameters as the live table shows them."""
    return _env(TRIAL_NAME, "trial_name()")


def trial_dir():
    """The trial's own directory (it exists), for checkpoints and other files."""
    return _env(TRIAL_DIR, "trial_dir()")


def checkpoint_path(name="checkpoint.pt"):
    """A path for `name` in the trial's directory."""
    return os.path.join(trial_dir(), name)


def seed():
    """The trial's seed (int): the config's seed, plus the repeat for sweep.repeats."""
    return int(_env(TRIAL_SEED, "seed()"))


def sweep_name():
    """The sweep's name (its directory runs/NAME/)."""
    return _env(SWEEP_NAME, "sweep_name()")


def sweep_dir():
    """The sweep's directory, absolute (runs/NAME/, where sweep.db and report.html are)."""
    return _env(SWEEP_DIR, "sweep_dir()")


def device():
    """The slot the trial runs on, on the machine it runs on: "cpu:0", "cuda:1"."""
    return _env(DEVICE, "device()")


def torch_device():
    """"cuda:0" when the trial has a GPU (CUDA_VISIBLE_DEVICES makes its GPUs 0, 1, ...), else
    "cpu". Outside a sweep: "cpu"."""
    return "cuda:0" if ":cuda:" in ":" + os.environ.get(DEVICE, "") else "cpu"


def _number(name, value):
    """A metric value as JSON writes it: an int or a float (NaN and infinities included). Numbers
    of other libraries (numpy scalars, one-element tensors) are taken through float()."""
    if not isinstance(value, (bool, str, bytes)):  # float("0.5") would take a string
        if isinstance(value, numbers.Integral):
            return int(value)
        try:
            return float(value)
        except (TypeError, ValueError, RuntimeError):
            pass
    raise TypeError(f"sweep_trial.log(): {name} must be a number, got {type(value).__name__} "
                    f"{value!r:.80}")


def log(step=None, epoch=None, **metrics):
    """Reports metrics: prints one JSON line on stdout, the line sweep reads, and flushes.

        log(epoch=3, step=1200, train_loss=0.41, val_loss=0.45, val_accuracy=0.87)

    `step` is a whole number from 0 to 2^53 (sweep counts the lines when it is left out);
    `epoch` a number from 0, a fraction being a position within training. NaN and infinite
    values are written as Python's json does, and a NaN loss ends the trial `diverged`.
    """
    if not metrics:
        raise ValueError("sweep_trial.log(): no metric given, e.g. log(epoch=1, val_accuracy=0.9)")
    line = {}
    if epoch is not None:
        e = _number("epoch", epoch)
        if not math.isfinite(e) or e < 0 or e > MAX_STEP:
            raise ValueError(f"sweep_trial.log(): epoch must be a number from 0 to 2^53, got {epoch!r}")
        line["epoch"] = int(e) if float(e).is_integer() else e
    if step is not None:
        s = None
        if not isinstance(step, bool):
            try:
                s = operator.index(step)
            except TypeError:
                s = step if isinstance(step, float) and step.is_integer() else None
        if s is None or not 0 <= s <= MAX_STEP:
            raise ValueError(f"sweep_trial.log(): step must be a whole number from 0 to 2^53, "
                             f"got {step!r}")
        line["step"] = int(s)
    for name, value in metrics.items():
        line[name] = _number(name, value)
    text = json.dumps(line, allow_nan=True) + "\n"
    with _write_lock:
        sys.stdout.write(text)
        sys.stdout.flush()
