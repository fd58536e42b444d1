"""The public API's property test (tests/property_api.py), run in a child process:
a crash (an abort in the library) fails this test instead of killing pytest, and
the timeout bounds a hang. `python tests/property_api.py --examples 5000 --seed N`
runs it longer (docs/reliability.md)."""

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).with_name("property_api.py")


def test_public_api_gives_numpys_answer_or_a_typed_error():
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--examples", "600"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode in (0, 1), f"the child died (exit {out.returncode}):\n{out.stderr[-3000:]}"
    report = json.loads(out.stdout.splitlines()[-1])
    assert report["n_failures"] == 0, json.dumps(report["failures"][:5], indent=1)
    counts = report["counts"]
    assert counts["cases"] == 600
    assert counts.get("correct", 0) > 250, counts  # most cases compute something
