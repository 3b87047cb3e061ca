"""A change that leaves a function returning a value on some paths and reaching its end on others
(:func:`contenox.workspace.dropped_returns`): read from real Python and JavaScript source, before and after."""

from __future__ import annotations

from contenox.workspace import dropped_returns

PY = '''\
class Cache:
    def get(self, key):
        if key in self.data:
            return self.data[key]
        value = self.load(key)
        self.data[key] = value
        return value

    def clear(self):
        self.data.clear()


def parse(text):
    try:
        return int(text)
    except ValueError:
        raise SystemExit(2)


def pick(x):
    if x:
        return 1
    else:
        return 2


def loose(x):
    if x:
        return 1
'''

JS = '''\
class Range {
  parseRange (range) {
    const cached = cache.get(range)
    if (cached) {
      return cached
    }
    const result = range.split(' ')
    cache.set(range, result)
    return result
  }
}

const replaceCaret = (comp, options) => {
  return comp.replace(re, (_, M) => {
    let ret
    if (M === '0') {
      ret = '<1'
    } else {
      ret = '<2'
    }
    return ret
  })
}

function isX (id) {
  if (!id) {
    return true
  }
  return id.toLowerCase() === 'x'
}
'''


def test_a_python_function_whose_last_return_is_taken_out_is_named_with_its_line() -> None:
    after = PY.replace("        self.data[key] = value\n        return value\n", "        self.data[key] = value\n")
    assert dropped_returns("cache.py", PY, after) == (
        "cache.py: `Cache.get` (line 2) returns a value on some paths and now reaches its end without one")
    # the `except` branch no longer raises: `parse` returns on one path and falls off the other
    no_raise = PY.replace("        raise SystemExit(2)\n", "        print('bad')\n")
    assert dropped_returns("cache.py", PY, no_raise) == (
        "cache.py: `parse` (line 13) returns a value on some paths and now reaches its end without one")
    no_else = PY.replace("    else:\n        return 2\n", "")
    assert dropped_returns("cache.py", PY, no_else) == (
        "cache.py: `pick` (line 20) returns a value on some paths and now reaches its end without one")


def test_python_changes_that_keep_every_path_returning_or_never_did_are_not_named() -> None:
    assert dropped_returns("cache.py", PY, PY) is None
    # code after the return is never reached: the function still returns on every path
    dead = PY.replace("        return value\n", "        return value\n        print(value)\n")
    assert dropped_returns("cache.py", PY, dead) is None
    # a function that already fell off its end (`loose`), one that returns nothing at all (`clear`), a new one
    assert dropped_returns("cache.py", PY, PY.replace("        return 1\n", "        return 3\n")) is None
    assert dropped_returns("cache.py", PY, PY.replace("self.data.clear()", "self.data = {}")) is None
    assert dropped_returns("cache.py", PY, PY + "\n\ndef new(x):\n    if x:\n        return 1\n") is None
    # every value return taken out: a procedure now, not a function with a missing return (not consistent-return's)
    proc = PY.replace("        if key in self.data:\n            return self.data[key]\n", "").replace(
        "        return value\n", "")
    assert dropped_returns("cache.py", PY, proc) is None
    # a `while True` left only by its returns (a nested loop's `break` is that loop's), a `try` whose `else` returns
    loop = ("def first(xs):\n    while True:\n        for x in xs:\n            break\n        return x\n"
            "\n\ndef load(p):\n    try:\n        f = open(p)\n    except OSError:\n        return None\n"
            "    else:\n        return f.read()\n")
    assert dropped_returns("l.py", loop, loop.replace("        return f.read()\n", "        f.read()\n")) == (
        "l.py: `load` (line 8) returns a value on some paths and now reaches its end without one")
    assert dropped_returns("l.py", loop, loop.replace("            break\n", "            pass\n        break\n")) == (
        "l.py: `first` (line 1) returns a value on some paths and now reaches its end without one")
    # a generator's return ends its iteration; nested functions are their own
    gen = "def g(xs):\n    for x in xs:\n        yield x\n    return 1\n"
    assert dropped_returns("g.py", gen, gen.replace("    return 1\n", "")) is None
    # not Python, a new or deleted file, a text that does not parse: nothing said
    assert dropped_returns("cache.txt", PY, "") is None and dropped_returns("cache.py", None, PY) is None
    assert dropped_returns("cache.py", PY, None) is None and dropped_returns("cache.py", PY, "def (") is None


def test_a_javascript_method_whose_last_return_is_taken_out_is_named() -> None:
    """semver's ``parseRange`` as the 1.5B's three passing candidates left it (the memo's early return kept)."""
    after = JS.replace("    cache.set(range, result)\n    return result\n", "    cache.set(range, result) // fixed\n")
    assert dropped_returns("classes/range.js", JS, after) == (
        "classes/range.js: `Range.parseRange` (line 2) returns a value on some paths and now reaches its end "
        "without one")
    arrow = JS.replace("  return id.toLowerCase() === 'x'\n", "  id.toLowerCase()\n")
    assert dropped_returns("classes/range.js", JS, arrow) == (
        "classes/range.js: `isX` (line 25) returns a value on some paths and now reaches its end without one")


def test_javascript_changes_that_keep_every_path_returning_are_not_named() -> None:
    assert dropped_returns("range.js", JS, JS) is None
    # the caret fix itself: a template changed inside the callback, every return kept
    assert dropped_returns("range.js", JS, JS.replace("ret = '<1'", "ret = '<0.0.4'")) is None
    dead = JS.replace("    return result\n", "    return result\n    debug(result)\n")
    assert dropped_returns("range.js", JS, dead) is None
    # an if/else that returns on both branches ends the function as a return does
    both = JS.replace("    cache.set(range, result)\n    return result\n",
                      "    if (result.length) {\n      return result\n    } else {\n      throw new Error('x')\n    }\n")
    assert dropped_returns("range.js", JS, both) is None
    assert dropped_returns("range.js", JS, "class {") is None  # does not parse: the check decides
