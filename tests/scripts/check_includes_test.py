#!/usr/bin/python3
"""check_includes_test.py — scripts/check-includes on small trees made here: a listed arrow
passes, an unlisted one fails naming its file and line (by root path and by a relative path),
trainer's subfolders are rooms inside the library while arrows between libraries are looked up
library to library, comments in parentheses (over several lines too) are ignored, a header outside
the tree is no arrow, and a misspelt room or a missing section is refused. Standard library only.
"""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                      "check-includes")

ARROWS = """# Architecture

## Arrows

```
store        → common            (a comment that
                                  runs over two lines)
sweep/run    → store,
               common
```

```
trainer/layers → trainer
```

## Decisions
"""


class CheckIncludes(unittest.TestCase):
    def tree(self, files, architecture=ARROWS):
        root = tempfile.mkdtemp(prefix="check_includes_")
        self.addCleanup(subprocess.run, ["rm", "-rf", root])
        files = dict(files)
        files["ARCHITECTURE.md"] = architecture
        for rel, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                f.write(text)
        return root

    def run_on(self, root, *flags):
        return subprocess.run([sys.executable, SCRIPT, "--root", root, *flags],
                              capture_output=True, text=True)

    def test_listed_arrows_pass(self):
        root = self.tree({
            "common/a.h": "// a\n",
            "store/b.h": '#include "common/a.h"\n#include "vendor/outside.h"\n',
            "sweep/run/c.cpp": '#include "../../store/b.h"\n#include "common/a.h"\n',
            "trainer/network.h": "// shapes\n",
            "trainer/layers/conv.h": '#include "trainer/network.h"\n#include "conv_impl.h"\n',
            "trainer/layers/conv_impl.h": "// same room\n",
        })
        r = self.run_on(root)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_an_unlisted_arrow_fails_with_its_file_and_line(self):
        root = self.tree({
            "common/a.h": "// a\n",
            "store/b.h": '// b\n#include "common/a.h"\n',
            "common/c.h": '// c\n\n#include "store/b.h"\n',
            "store/d.cpp": '#include "../sweep/run/e.h"\n',
            "sweep/run/e.h": "// e\n",
            "trainer/layers/f.h": "// f\n",
        })
        r = self.run_on(root)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("common → store", r.stdout)
        self.assertIn('common/c.h:3: #include "store/b.h"', r.stdout)
        self.assertIn("store → sweep/run", r.stdout)
        self.assertIn("store/d.cpp:1:", r.stdout)
        self.assertNotIn("store → common", r.stdout)

    def test_trainer_rooms_inside_and_the_library_outside(self):
        root = self.tree({
            "common/a.h": "// a\n",
            "trainer/network.h": '#include "trainer/layers/conv.h"\n',
            "trainer/layers/conv.h": "// conv\n",
            "trainer/cuda/k.cuh": '#include "common/a.h"\n',
        })
        r = self.run_on(root)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("trainer → trainer/layers", r.stdout)
        self.assertIn("trainer → common", r.stdout)  # trainer/cuda's include, by its library
        self.assertNotIn("trainer/cuda", r.stdout.split("\n")[0])
        m = self.run_on(root, "--measure")
        self.assertEqual(m.returncode, 0)
        self.assertIn("trainer          → common, trainer/layers", m.stdout)

    def test_a_misspelt_room_or_no_section_is_refused(self):
        r = self.run_on(self.tree({"trainer/layers/f.h": ""}, ARROWS.replace("store,", "stor,")))
        self.assertEqual(r.returncode, 2)
        self.assertIn("no room 'stor'", r.stderr)
        r = self.run_on(self.tree({}, "# Architecture\n"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("no '## Arrows' section", r.stderr)


if __name__ == "__main__":
    unittest.main()
