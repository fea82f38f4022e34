"""Mutated source files for the 11 languages (shared by the fuzz test and the stress script)."""

from __future__ import annotations

import random
from collections.abc import Iterator

SEEDS = {
    "py": 'import os\n\nclass Box(Base):\n    """A box."""\n\n    def open(self, lid=1):\n'
          '        return os.path.join("a", str(lid))\n\n\ndef make():\n    return Box().open()\n',
    "js": 'import { x } from "./x";\nexport class Box extends Base {\n  open(lid) { return x(lid); }\n}\n'
          'function make() { return new Box().open(1); }\nconst f = (a) => a + 1;\n',
    "ts": 'import { X } from "./x";\ninterface Lid { size: number }\nexport class Box<T> implements Lid '
          '{\n  size = 1;\n  open(lid: T): number { return X(lid); }\n}\n',
    "tsx": 'import React from "react";\nexport function Box(props: {n: number}) {\n'
           '  return <div className="box">{props.n}</div>;\n}\n',
    "go": 'package box\n\nimport "fmt"\n\ntype Box struct{ n int }\n\nfunc (b *Box) Open() string '
          '{\n\treturn fmt.Sprint(b.n)\n}\n\nfunc Make() *Box { return &Box{1} }\n',
    "rs": 'use std::fmt;\n\npub struct Box { n: u32 }\n\nimpl Box {\n    pub fn open(&self) -> u32 '
          '{ self.n }\n}\n\npub fn make() -> Box { Box { n: 1 } }\n',
    "java": 'package box;\n\nimport java.util.List;\n\npublic class Box extends Base {\n'
            '    public int open(int lid) { return helper(lid); }\n}\n',
    "c": '#include <stdio.h>\n\nstruct box { int n; };\n\nint open_box(struct box *b) {\n'
         '    return printf("%d", b->n);\n}\n',
    "cpp": '#include <vector>\n\nnamespace shop {\nclass Box : public Base {\n public:\n'
           '  int open(int lid) { return helper(lid); }\n};\n}\n',
    "cs": 'using System;\n\nnamespace Shop {\n  public class Box : Base {\n'
          '    public int Open(int lid) { return Helper(lid); }\n  }\n}\n',
    "rb": 'require "set"\n\nmodule Shop\n  class Box < Base\n    def open(lid)\n'
          '      helper(lid)\n    end\n  end\nend\n',
    "php": '<?php\nnamespace Shop;\n\nuse Other\\Thing;\n\nclass Box extends Base {\n'
           '    public function open($lid) { return $this->helper($lid); }\n}\n',
}
NEST = {  # (open, close) that nest in each language's grammar
    "py": ("(", ")"), "js": ("[", "]"), "ts": ("{", "}"), "tsx": ("(", ")"), "go": ("(", ")"),
    "rs": ("(", ")"), "java": ("{", "}"), "c": ("(", ")"), "cpp": ("{", "}"), "cs": ("{", "}"),
    "rb": ("[", "]"), "php": ("(", ")"),
}
MUTATIONS = ("flip", "truncate", "nest", "nul", "utf8", "cr", "splice")


def mutate(rng: random.Random, ext: str, how: str, nest_depth: int) -> bytes:
    data = bytearray(SEEDS[ext].encode("utf-8"))
    if how == "flip":
        for _ in range(rng.randint(1, 12)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif how == "truncate":
        del data[rng.randrange(1, len(data)):]
    elif how == "nest":
        o, c = NEST[ext]
        prefix = "x = " if ext in ("py", "rb") else ("<?php $x = " if ext == "php" else "")
        body = prefix + o * nest_depth + "1" + c * (nest_depth if rng.random() < 0.5 else 0)
        data = bytearray(body.encode("ascii")) + data
    elif how == "nul":
        for _ in range(rng.randint(1, 20)):
            data.insert(rng.randrange(len(data)), 0)
    elif how == "utf8":
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data)):0] = rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80",
                                                          b"\xf8\x88\x80\x80\x80"])
    elif how == "cr":
        data = bytearray(bytes(data).replace(b"\n", b"\r"))
    else:  # splice two languages together
        other = SEEDS[rng.choice(list(SEEDS))].encode("utf-8")
        cut = rng.randrange(len(data))
        data = data[:cut] + other + data[cut:]
    return bytes(data)


def minified_js(n_bytes: int) -> bytes:
    """One line of plausible minified JavaScript."""
    parts, size, i = [], 0, 0
    while size < n_bytes:
        s = f"function a{i}(b,c){{return b+c*{i}}};var v{i}=a{i}({i},{i + 1});"
        parts.append(s)
        size += len(s)
        i += 1
    return "".join(parts).encode("ascii")


def corpus(n: int, seed: int = 1, nest_depth: int = 2000) -> Iterator[tuple[str, bytes, str]]:
    """(file name, bytes, mutation) for `n` files, cycling through languages and mutations."""
    rng = random.Random(seed)
    exts = list(SEEDS)
    for i in range(n):
        ext = exts[i % len(exts)]
        how = MUTATIONS[(i // len(exts)) % len(MUTATIONS)]
        yield f"f{i:05d}_{how}.{ext}", mutate(rng, ext, how, nest_depth), how
