"""Reading a line at a terminal prompt without holding up Ctrl-C.

A prompt read in a thread (asyncio.to_thread with getpass or readline) kept the program until
Enter was pressed: Ctrl-C cancelled the task, but asyncio.run then waited for the thread still
blocked in read(). Here the event loop itself watches the terminal (loop.add_reader) while the
terminal stays in canonical mode, so the driver keeps editing the line (Backspace, Ctrl-U) and
Ctrl-C stays a signal that ends the prompt at once. Secret answers are read as getpass reads them:
echo off, a newline written after, and the terminal's mode restored on every way out (Enter,
Ctrl-C, Ctrl-D, an error).

Where stdin is not a terminal (a pipe), the line is read in a daemon thread, which the loop
doesn't wait for at exit.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading


async def ask(prompt: str, secret: bool = False) -> str:
    """The line typed after `prompt` (written to stderr), without its line ending; "" at end of input.
    With `secret` nothing typed is echoed."""
    fd = _terminal_fd()
    try:
        import termios
    except ImportError:  # not POSIX: no terminal modes to set here
        fd = None
    if fd is None:
        if secret and sys.stdin.isatty():
            import getpass  # a console without termios: getpass hides what is typed there

            return getpass.getpass(prompt)
        _show(prompt)
        line = await read_line_in_background()
        return line if secret else line.strip()

    saved = termios.tcgetattr(fd)
    mode = list(saved)
    mode[3] |= termios.ICANON | termios.ISIG  # line editing by the driver; Ctrl-C is SIGINT
    if secret:
        mode[3] &= ~termios.ECHO
    finished = False
    try:
        termios.tcsetattr(fd, termios.TCSADRAIN, mode)
        _show(prompt)  # only now: what is typed once the prompt shows is never echoed
        line = await _read_line(fd)
        finished = True
    finally:
        # At once (TCSANOW), not once the output has drained (TCSADRAIN): nothing on the way
        # out of a prompt waits on the terminal, which may not be reading (Ctrl-S, a stuck window).
        termios.tcsetattr(fd, termios.TCSANOW, saved)
        if secret or not finished:
            # The Enter of a secret wasn't echoed; after Ctrl-C what is printed next starts a line.
            sys.stderr.write("\n")
            sys.stderr.flush()
    return line.rstrip("\r") if secret else line.strip()


def _show(prompt: str) -> None:
    sys.stderr.write(prompt)
    sys.stderr.flush()


def _terminal_fd() -> int | None:
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    return fd if os.isatty(fd) else None


async def _read_line(fd: int) -> str:
    """One line from a terminal in canonical mode, read by the event loop as it arrives."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    received = bytearray()

    def readable() -> None:
        try:
            data = os.read(fd, 4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        received.extend(data)
        if (not data or b"\n" in data) and not done.done():  # Enter, or end of input (Ctrl-D)
            done.set_result(None)

    loop.add_reader(fd, readable)
    try:
        await done
    finally:
        loop.remove_reader(fd)
    encoding = getattr(sys.stdin, "encoding", None) or "utf-8"
    return received.decode(encoding, "replace").split("\n", 1)[0]


def read_line_in_background() -> asyncio.Future[str]:
    """stdin's next line (without its line ending), read in a daemon thread: one the loop doesn't
    wait for at exit, so neither Ctrl-C nor an answer arriving elsewhere first waits for Enter."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str] = loop.create_future()

    def read() -> None:
        try:
            line = sys.stdin.readline()
        except (OSError, ValueError):
            line = ""

        def give() -> None:
            if not future.done():
                future.set_result(line.rstrip("\r\n"))

        loop.call_soon_threadsafe(give)

    threading.Thread(target=read, daemon=True, name="poppy-prompt").start()
    return future
