"""The baseline every operation is compared with: read the spool, hash each line with
sha256 and parse it with orjson.  Nothing else."""

import hashlib
import sys

import orjson


def main(path: str) -> None:
    n = 0
    with open(path, "rb") as fh:
        for line in fh:
            raw = line.rstrip(b"\n")
            hashlib.sha256(raw).hexdigest()
            try:
                orjson.loads(raw)
            except orjson.JSONDecodeError:
                pass
            n += 1
    print(n)


if __name__ == "__main__":
    main(sys.argv[1])
