"""Helper process for the store's durability tests: writes answers forever, printing each committed id.

    python tests/progress_writer.py HOME [TAG]

The parent reads the ids, kills this process with SIGKILL mid-stream, and checks every printed id
is in the store. An id is printed only after record_answer() returned, i.e. after COMMIT.
"""

import sys
from pathlib import Path

from tutor.progress.store import Store


def main() -> None:
    home, tag = Path(sys.argv[1]), (sys.argv[2] if len(sys.argv) > 2 else "w")
    limit = int(sys.argv[3]) if len(sys.argv) > 3 else None
    store = Store(home, timeout_s=10)
    n = 0
    while limit is None or n < limit:
        row = store.record_answer("lesson", f"{tag}-{n}", "x" * 200, n % 2 == 0, rating=3)
        print(row.id, flush=True)
        n += 1


if __name__ == "__main__":
    main()
