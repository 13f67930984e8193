"""The CLI's event loops (cli/event_loop.py): Ctrl-C ends them at once, whatever blocking call is
still running in a worker thread, and a command's own first answer to Ctrl-C comes first.

Each runs in a child Python, so a loop that failed to end is a timeout here, not a stuck suite."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from cli_support import subprocess_env

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGINT sent with os.kill")

# Only bounds a child that would otherwise never end; each ends in well under a second.
ENDS_WITHIN_SECONDS = 30


def _child(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=subprocess_env(None),
        capture_output=True,
        text=True,
        timeout=ENDS_WITHIN_SECONDS,
        stdin=subprocess.DEVNULL,
    )


def test_ctrl_c_while_a_worker_thread_is_blocked_ends_the_run_at_once():
    """A DNS lookup that never answers (here: a wait nothing releases) in the default executor:
    asyncio.run joined its thread before returning, so Ctrl-C kept the process until it ended."""
    done = _child("""
        import asyncio, os, signal, threading
        from poppy_tui.cli.event_loop import run

        never = threading.Event()
        def blocked():
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while this call is under way
            never.wait()

        async def main():
            try:
                await asyncio.get_running_loop().run_in_executor(None, blocked)
            finally:
                print("cleaned up", flush=True)

        try:
            run(main())
        except KeyboardInterrupt:
            print("interrupted", flush=True)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["cleaned", "up", "interrupted"]


def test_a_commands_first_answer_to_ctrl_c_then_the_second_interrupts():
    """`send --watch`: the first Ctrl-C asks the watch to stop; the next one cancels it."""
    done = _child("""
        import asyncio, os, signal
        from poppy_tui.cli.event_loop import ctrl_c, run

        async def main():
            asked = asyncio.Event()
            ctrl_c().first = asked.set
            os.kill(os.getpid(), signal.SIGINT)
            await asked.wait()
            print("asked to stop", flush=True)
            os.kill(os.getpid(), signal.SIGINT)
            try:
                await asyncio.Event().wait()  # runs until cancelled
            finally:
                print("cancelled", flush=True)

        try:
            run(main())
        except KeyboardInterrupt:
            print("interrupted", flush=True)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["asked to stop", "cancelled", "interrupted"]


def test_a_run_that_ends_by_itself_gives_its_result_and_leaves_sigint_as_it_was():
    done = _child("""
        import asyncio, signal
        from poppy_tui.cli.event_loop import run

        async def main():
            return await asyncio.to_thread(lambda: 42)

        print(run(main()), signal.getsignal(signal.SIGINT) is signal.default_int_handler, flush=True)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["42", "True"]


def test_blocking_calls_run_in_a_bounded_number_of_daemon_threads_that_end_when_idle():
    """A burst of blocking calls (DNS lookups of many Companies at once) waits for a thread rather
    than starting one each; every call still runs, and no thread is left once they are done."""
    import threading

    from poppy_tui.cli.event_loop import DaemonThreadExecutor

    def ours() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "poppy-blocking-call"]

    executor = DaemonThreadExecutor(max_threads=4)
    release = threading.Event()
    started = threading.Semaphore(0)

    def blocked(number: int) -> int:
        started.release()
        release.wait(ENDS_WITHIN_SECONDS)
        return number

    futures = [executor.submit(blocked, number) for number in range(40)]
    for _ in range(4):  # the first four are running, each in a thread of its own
        assert started.acquire(timeout=ENDS_WITHIN_SECONDS)
    running = ours()  # started in submit(): none more for the other 36, which wait their turn
    assert len(running) == 4 and all(t.daemon for t in running)
    release.set()
    assert [f.result(timeout=ENDS_WITHIN_SECONDS) for f in futures] == list(range(40))
    for thread in running:
        thread.join(ENDS_WITHIN_SECONDS)
    assert ours() == []
    executor.shutdown()
    with pytest.raises(RuntimeError, match="after shutdown"):
        executor.submit(blocked, 0)


def test_an_exception_in_a_blocking_call_reaches_its_awaiter_and_the_thread_goes_on():
    from poppy_tui.cli.event_loop import DaemonThreadExecutor

    executor = DaemonThreadExecutor(max_threads=1)

    def fail() -> None:
        raise OSError("no route to host")

    failing = executor.submit(fail)
    after = executor.submit(lambda: "next")
    with pytest.raises(OSError, match="no route"):
        failing.result(timeout=ENDS_WITHIN_SECONDS)
    assert after.result(timeout=ENDS_WITHIN_SECONDS) == "next"
