"""Grad mode and the forward-AD level belong to a thread, as in PyTorch."""

import threading

import pytest

import torchlight
from torchlight.autograd import forward_ad as fwad


def _in_thread(fn):
    """Run fn in a new thread; return its result (re-raising its exception here)."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as e:  # carried to the calling thread
            box["error"] = e

    t = threading.Thread(target=run)
    t.start()
    t.join(timeout=30)
    assert not t.is_alive(), "the thread did not finish"
    if "error" in box:
        raise box["error"]
    return box["value"]


@pytest.mark.task5_1
def test_no_grad_in_one_thread_does_not_stop_recording_in_another():
    inside, leave = threading.Event(), threading.Event()

    def hold_no_grad():
        with torchlight.no_grad():
            inside.set()
            leave.wait(timeout=30)

    holder = threading.Thread(target=hold_no_grad)
    holder.start()
    try:
        assert inside.wait(timeout=30)
        x = torchlight.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        assert torchlight.autograd.is_grad_enabled()
        y.backward()
        assert x.grad.to_numpy().tolist() == [2.0, 4.0]
    finally:
        leave.set()
        holder.join(timeout=30)


@pytest.mark.task5_1
def test_a_new_thread_starts_with_grad_enabled_even_inside_no_grad():
    with torchlight.no_grad():
        assert _in_thread(torchlight.autograd.is_grad_enabled) is True
        assert not torchlight.autograd.is_grad_enabled()


@pytest.mark.task5_4  # forward-mode AD
def test_a_dual_level_is_not_seen_by_other_threads():
    x = torchlight.tensor([1.0, 2.0])
    with fwad.dual_level():
        dual = fwad.make_dual(x, torchlight.tensor([1.0, 1.0]))
        assert fwad.unpack_dual(dual * 3.0).tangent is not None
        # another thread has no level: making a dual value there is an error, as outside one
        with pytest.raises(RuntimeError, match="no level exists"):
            _in_thread(lambda: fwad.make_dual(x, torchlight.tensor([1.0, 1.0])))
