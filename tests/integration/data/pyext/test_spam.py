"""The extension's own test, run inside the root after installing the wheel."""
import platform

import spam

assert spam.add(2, 3) == 5, spam.add(2, 3)
assert spam.add(-7, 7) == 0
assert spam.machine() == platform.machine(), (spam.machine(), platform.machine())
print("spam ok", spam.machine())
