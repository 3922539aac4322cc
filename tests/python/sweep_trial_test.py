"""Unit tests of python/sweep_trial.py (standard library only): the metric lines log() prints are
the lines sweep's reader takes (scheduler/metric_line.h), and misuse is refused with a reason.
    python3 tests/python/sweep_trial_test.py
"""
import contextlib
import io
import json
import math
import os
import sys
import unittest
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import sweep_trial  # noqa: E402


def logged(*args, **kwargs):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        sweep_trial.log(*args, **kwargs)
    return out.getvalue()


class Float:  # a number of another library (numpy scalar, one-element tensor)
    def __float__(self):
        return 0.25


class LogTest(unittest.TestCase):
    def test_one_json_line_epoch_and_step_first(self):
        line = logged(step=40, epoch=2, val_accuracy=0.91, train_loss=0.3)
        self.assertEqual(line, '{"epoch": 2, "step": 40, "val_accuracy": 0.91, "train_loss": 0.3}\n')

    def test_nan_and_infinities_as_python_json_writes_them(self):
        line = logged(step=1, loss=float("nan"), a=float("inf"), b=-math.inf)
        self.assertEqual(line, '{"step": 1, "loss": NaN, "a": Infinity, "b": -Infinity}\n')

    def test_whole_float_step_and_epoch_are_integers_fractional_epoch_stays(self):
        self.assertEqual(logged(step=3.0, epoch=1.0, x=1), '{"epoch": 1, "step": 3, "x": 1}\n')
        self.assertEqual(logged(epoch=1.5, x=1), '{"epoch": 1.5, "x": 1}\n')

    def test_numbers_of_other_libraries_go_through_float(self):
        self.assertEqual(json.loads(logged(x=Float())), {"x": 0.25})

    def test_refused_with_the_reason(self):
        cases = [
            ({}, ValueError, "no metric given"),
            ({"step": 1.5, "x": 1}, ValueError, "step must be a whole number"),
            ({"step": -1, "x": 1}, ValueError, "step must be a whole number"),
            ({"step": 2 ** 53 + 1, "x": 1}, ValueError, "step must be a whole number"),
            ({"step": True, "x": 1}, ValueError, "step must be a whole number"),
            ({"epoch": -1, "x": 1}, ValueError, "epoch must be a number from 0"),
            ({"epoch": float("nan"), "x": 1}, ValueError, "epoch must be a number from 0"),
            ({"x": "0.5"}, TypeError, "x must be a number, got str"),
            ({"x": True}, TypeError, "x must be a number, got bool"),
            ({"x": [1]}, TypeError, "x must be a number, got list"),
        ]
        for kwargs, error, text in cases:
            with self.subTest(kwargs=kwargs):
                with self.assertRaises(error) as caught:
                    logged(**kwargs)
                self.assertIn(text, str(caught.exception))

    def test_flushes_stdout(self):
        flushed = []

        class Out(io.StringIO):
            def flush(self):
                flushed.append(self.getvalue())

        with contextlib.redirect_stdout(Out()):
            sweep_trial.log(x=1)
        self.assertEqual(flushed, ['{"x": 1}\n'])


class ParamsTest(unittest.TestCase):
    def test_types_and_dotted_names_read_either_way(self):
        env = {"SWEEP_PARAMS": '{"training.learning_rate": 0.01, "training.batch_size": 64, '
                               '"mode": "fast", "flag": true, "layers": [1, 2]}'}
        with mock.patch.dict(os.environ, env):
            p = sweep_trial.params()
        self.assertEqual(p["training.learning_rate"], 0.01)
        self.assertEqual(p["training"]["learning_rate"], 0.01)
        self.assertIsInstance(p["training"]["batch_size"], int)
        self.assertEqual(p["training"], {"learning_rate": 0.01, "batch_size": 64})
        self.assertIs(p["flag"], True)
        self.assertEqual(p["layers"], [1, 2])
        self.assertEqual(p.get("training.momentum", 0.9), 0.9)
        self.assertEqual(p.get("mode"), "fast")
        with self.assertRaises(KeyError):
            p["missing"]

    def test_outside_a_sweep_an_error_or_the_default(self):
        with mock.patch.dict(os.environ, {}, clear=True):
            self.assertFalse(sweep_trial.in_sweep())
            with self.assertRaises(RuntimeError) as caught:
                sweep_trial.params()
            self.assertIn("SWEEP_PARAMS is not set", str(caught.exception))
            self.assertIn("sweep run", str(caught.exception))
            self.assertEqual(sweep_trial.params(default={"a.b": 1})["a"]["b"], 1)
            with self.assertRaises(RuntimeError) as caught:
                sweep_trial.trial_dir()
            self.assertIn("SWEEP_TRIAL_DIR is not set", str(caught.exception))
            self.assertEqual(sweep_trial.torch_device(), "cpu")

    def test_bad_params_variable(self):
        for text, reason in [("{", "not JSON"), ("[1]", "not a JSON object")]:
            with mock.patch.dict(os.environ, {"SWEEP_PARAMS": text}):
                with self.assertRaises(RuntimeError) as caught:
                    sweep_trial.params()
                self.assertIn(reason, str(caught.exception))

    def test_trial_facts(self):
        env = {"SWEEP_PARAMS": "{}", "SWEEP_TRIAL_ID": "12", "SWEEP_TRIAL_NUMBER": "3",
               "SWEEP_TRIAL_DIR": "/runs/x/trials/003", "SWEEP_TRIAL_SEED": "4",
               "SWEEP_SWEEP_NAME": "x", "SWEEP_DEVICE": "cuda:1", "SWEEP_TRIAL_NAME": "lr=1",
               "SWEEP_SWEEP_DIR": "/runs/x"}
        with mock.patch.dict(os.environ, env):
            self.assertEqual((sweep_trial.trial_id(), sweep_trial.trial_number(), sweep_trial.seed()),
                             (12, 3, 4))
            self.assertEqual(sweep_trial.checkpoint_path("m.pt"), "/runs/x/trials/003/m.pt")
            self.assertEqual(sweep_trial.sweep_name(), "x")
            self.assertEqual(sweep_trial.sweep_dir(), "/runs/x")
            self.assertEqual(sweep_trial.trial_name(), "lr=1")
            self.assertEqual(sweep_trial.device(), "cuda:1")
            self.assertEqual(sweep_trial.torch_device(), "cuda:0")


if __name__ == "__main__":
    unittest.main()
