"""Child process of test_fuzz_corpora: runs each input file through syncscope.analyze and
syncscope.predict (by path, and by bytes when the file is UTF-8 text) and prints one JSON
line per input. Names each input before touching it, so a crash of the interpreter leaves
the culprit as the last "begin" line."""

import json
import sys

import syncscope


def outcome(fn, arg):
    try:
        fn(arg)
        return [0, ""]
    except syncscope.Error as e:
        return [e.exit_code, str(e)]
    except Exception as e:  # anything else is a failure of the module, reported by the parent
        return [-1, f"{type(e).__name__}: {e}"]


def main(list_file):
    with open(list_file, encoding="utf-8") as f:
        paths = [line.rstrip("\n") for line in f if line.strip()]
    for path in paths:
        print(json.dumps({"begin": path}), flush=True)
        rec = {"path": path, "analyze": outcome(syncscope.analyze, path), "predict": outcome(syncscope.predict, path)}
        with open(path, "rb") as f:
            data = f.read()
        try:
            data.decode("utf-8")
            rec["analyze_bytes"] = outcome(syncscope.analyze, data)
        except UnicodeDecodeError:
            pass
        print(json.dumps(rec), flush=True)
    print(json.dumps({"done": len(paths)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
