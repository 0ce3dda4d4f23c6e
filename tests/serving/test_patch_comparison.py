"""The patch decision's shortcut (originals._edited_function): where it decides, it decides as
the full comparison of every function body and the skeleton does."""

from __future__ import annotations

import ast
import types

import pytest

from restbench.benchmark import resolve_services
from restbench.mutation import implementations_of
from restbench.mutation.apply import edited_text
from restbench.serving import originals

ORIGINAL = '''"""A module."""
import functools


def helper(value):
    """Doubles."""
    doubled = value * 2
    return doubled


class Store:
    limit = 3

    @functools.cache
    def get(self, key):
        found = key.upper()
        return found

    def put(self, key): return key


def last():
    first = "e"
    rest = "nd"
    return first + rest
'''

# name -> (find, replace, whether the shortcut must decide it)
EDITS = {
    "a body line": ("    doubled = value * 2", "    doubled = value * 3", True),
    "a method's body": ("        found = key.upper()", "        found = key.lower()", True),
    "a line added to a body": ("    return doubled", "    doubled += 1\n    return doubled",
                               True),
    "a body line removed": ('    rest = "nd"\n', "", True),
    "a body's first line removed": ("        found = key.upper()\n", "", False),
    "a comment only": ("    return doubled", "    return doubled  # same code", True),
    "the docstring": ('    """Doubles."""', '    """Triples."""', False),
    "a decorator": ("    @functools.cache\n", "", False),
    "a signature": ("def helper(value):", "def helper(value, factor=2):", False),
    "a body on the signature's line": ("def put(self, key): return key",
                                       "def put(self, key): return None", False),
    "a statement moved out of a body": ("    return first + rest",
                                        "    return first + rest\nEND = last()", False),
    "two functions at once": ("    return doubled\n\n\nclass Store:\n    limit = 3",
                              "    return -doubled\n\n\nclass Store:\n    limit = 4", False),
    "a class attribute": ("    limit = 3", "    limit = 4", False),
    # The shortcut parses the function's new lines alone: text that would not end with them.
    "a string left open": ('    rest = "nd"', '    rest = """nd', False),
    "a bracket left open": ("        found = key.upper()", "        found = (key.upper()", False),
    "a line continued past the function": ('    return first + rest',
                                           '    return first + rest \\', False),
}


def _full_comparison(old_text: str, new_text: str) -> list[str] | None:
    old_bodies = originals._bodies(ast.parse(old_text))
    new_tree = ast.parse(new_text)
    new_bodies = originals._bodies(new_tree)
    if old_bodies is None or new_bodies is None or old_bodies.keys() != new_bodies.keys():
        return None
    if ast.dump(originals._skeleton(ast.parse(old_text))) != \
            ast.dump(originals._skeleton(new_tree)):
        return None
    return [name for name in old_bodies if old_bodies[name] != new_bodies[name]]


def _shortcut(old_text: str, new_text: str) -> list[str] | None:
    tree = ast.parse(old_text)
    parsed = originals.ParsedFile(old_text.splitlines(), tree, originals._bodies(tree), "")
    edited = originals._edited_function(parsed, new_text)
    if edited is None:
        return None
    name, node, _ = edited
    return [name] if parsed.bodies and parsed.bodies[name] != originals._body_dump(node) else []


@pytest.mark.parametrize("name", EDITS)
def test_the_shortcut_decides_only_what_it_can_and_as_the_full_comparison(name: str) -> None:
    find, replace, decided = EDITS[name]
    assert ORIGINAL.count(find) == 1
    edited = ORIGINAL.replace(find, replace)
    shortcut = _shortcut(ORIGINAL, edited)
    if decided:
        assert shortcut is not None
        assert shortcut == _full_comparison(ORIGINAL, edited)
    else:
        assert shortcut is None


NESTED = '''class Outer:
    class Inner:
        def deep(self):
            """Deep."""
            value = 1
            return value
'''


@pytest.mark.parametrize("line_end", ["\n", "\r\n"])
def test_the_shortcut_decides_a_nested_method_with_either_line_end(line_end: str) -> None:
    old_text = NESTED.replace("\n", line_end)
    new_text = old_text.replace("value = 1", "value = 2")
    assert _shortcut(old_text, new_text) == ["Outer.Inner.deep"]
    assert _full_comparison(old_text, new_text) == ["Outer.Inner.deep"]


def test_the_shortcut_leaves_a_file_with_other_line_breaks_to_the_full_comparison() -> None:
    """str.splitlines breaks lines where the tokenizer does not (here inside a string)."""
    old_text = 'def f():\n    x = 1\n    return """a\u2028b"""\n'
    new_text = old_text.replace("x = 1", "x = 2")
    assert _shortcut(old_text, new_text) is None
    assert _full_comparison(old_text, new_text) == ["f"]



def _differences(alone: types.CodeType, full: types.CodeType) -> list[str]:
    found = [f"{full.co_qualname}.{name}" for name in (
        "co_code", "co_consts", "co_names", "co_varnames", "co_freevars", "co_cellvars",
        "co_flags", "co_firstlineno", "co_linetable", "co_exceptiontable", "co_qualname",
        "co_filename", "co_argcount", "co_kwonlyargcount", "co_stacksize")
        if name != "co_consts" and getattr(alone, name) != getattr(full, name)]
    if len(alone.co_consts) != len(full.co_consts):
        return [*found, f"{full.co_qualname}.co_consts"]
    for mine, theirs in zip(alone.co_consts, full.co_consts, strict=True):
        if isinstance(theirs, types.CodeType) and isinstance(mine, types.CodeType):
            found += _differences(mine, theirs)
        elif type(mine) is not type(theirs) or mine != theirs:
            found.append(f"{full.co_qualname}.co_consts")
    return found


@pytest.mark.parametrize("service_name", ["todo", "conduit", "fullstack"])
def test_a_function_compiled_alone_is_the_code_the_whole_module_gives_it(
        service_name: str) -> None:
    """Every built-in edit the shortcut decides: the edited function, compiled in its trimmed
    module (`_compiled_alone`), is the code object of a compile of the whole edited file, down
    to the bytecode (the compiler emits different calls on names bound by imports, for one)."""
    service = resolve_services([service_name])[0]
    compared = 0
    for implementation in implementations_of(service).values():
        if implementation.edit is None:
            continue
        relative, new_text = edited_text(implementation)
        old_text = (service.root.resolve() / relative).read_text(encoding="utf-8")
        old_tree = ast.parse(old_text)
        parsed = originals.ParsedFile(old_text.splitlines(), old_tree,
                                      originals._bodies(old_tree), "")
        edited = originals._edited_function(parsed, new_text)
        if edited is None:
            continue
        name, node, classes = edited
        filename = f"/served/{relative}"
        # As _code_patches does: the function parsed alone, the original's imports and classes.
        alone = originals._compiled_alone(old_tree, classes, node, filename)
        full = dict(originals._code_objects(compile(new_text, filename, "exec",
                                                    dont_inherit=True)))[name]
        assert alone is not None
        assert _differences(alone, full) == [], implementation.id
        compared += 1
    assert compared >= 50  # most edits change one function's body
