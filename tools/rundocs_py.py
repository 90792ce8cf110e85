"""Runs one document's Python blocks for tools/rundocs.py.

Reads the blocks as JSON on stdin ([{"where", "code", "file", "line",
"outputs"}], in document order) and runs them in one namespace: a block
of ">>>" lines as a doctest (its shown output compared, ELLIPSIS and
whitespace normalized), any other block as a script, whose printed text
must contain each of its "# Output:" strings. VKFLOW_VALIDATION=1 opens the
default Manager with the validation layer: a message it counted fails the
block. Exits 1 at the first block that fails.
"""

import contextlib
import doctest
import io
import json
import sys
import traceback


def main():
    units = json.load(sys.stdin)
    globs = {"__name__": "__main__"}
    parser = doctest.DocTestParser()
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    for u in units:
        if u["code"].lstrip().startswith(">>>"):
            test = parser.get_doctest(u["code"], globs, u["where"], u["file"], u["line"])
            out = io.StringIO()
            runner = doctest.DocTestRunner(optionflags=flags)
            res = runner.run(test, out=out.write, clear_globs=False)
            if res.failed:
                print("%s: doctest failed:\n%s" % (u["where"], out.getvalue()))
                return 1
            continue
        buf = io.StringIO()
        try:
            code = compile(u["code"], u["where"], "exec")
            with contextlib.redirect_stdout(buf):
                exec(code, globs)
        except Exception:
            print("%s: raised:\n%s" % (u["where"], traceback.format_exc()))
            return 1
        vk = sys.modules.get("vkflow")
        if vk is not None and hasattr(vk, "validation_messages"):
            n, last = vk.validation_messages()
            if n:
                print("%s: %d validation messages, the last: %s" % (u["where"], n, last))
                return 1
        for want in u["outputs"]:
            if want not in buf.getvalue():
                print("%s: the document shows %r, the block printed:\n%s" % (u["where"], want, buf.getvalue()))
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
