"""``gym-crawl bench step_cycles``: an object file's functions, relocations and instructions are read as the tool
places and disassembles the compiled kernels, and one short run (slow: every kernel compiled fresh with line
tables) names the compiled step's functions down to their source lines (timings are not asserted)."""
from __future__ import annotations

import json
import platform
import shutil
import sys

import pytest

from gym_crawl.benchmarks import step_cycles

needs_objdump = pytest.mark.skipif(sys.platform != "linux" or platform.machine() != "x86_64"
                                   or shutil.which("objdump") is None,
                                   reason="reads Linux x86-64 signal contexts and disassembles with objdump")

_IR = """
declare i64 @elsewhere(i64)

define i64 @twice_after_call(i64 %x) {
  %y = call i64 @elsewhere(i64 %x)
  %z = add i64 %y, %x
  %w = mul i64 %z, 2
  ret i64 %w
}
"""


def _object(tmp_path):
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    mod = llvm.parse_assembly(_IR)
    tm = llvm.Target.from_default_triple().create_target_machine()
    path = tmp_path / "f.o"
    path.write_bytes(tm.emit_object(mod))
    return str(path)


@needs_objdump
def test_an_objects_function_its_relocation_and_instructions(tmp_path):
    path = _object(tmp_path)
    syms = step_cycles._object_symbols(path)
    section, value, size = syms["twice_after_call"]
    assert section in (".text", ".ltext") and size > 0 and "elsewhere" not in syms  # declared, not defined
    assert step_cycles._relocated(path, section), "the call to an external function is relocated"
    code = step_cycles._section_bytes(path, section)
    assert len(code) >= value + size
    insns = step_cycles.disassemble(path, section, value, value + size)
    assert [o for o, _, _ in insns] == sorted(o for o, _, _ in insns) and insns[0][0] == value
    assert any(a.startswith("call") for _, a, _ in insns) and insns[-1][1].startswith("ret")
    assert all(loc == "" for _, _, loc in insns)  # no line table in this object


def test_source_lines_are_named_relative_to_the_package():
    assert step_cycles._short("/x/y/gym_crawl/crawl/kernels.py:432") == "crawl/kernels.py:432"
    assert step_cycles._short("/x/y/other.py:7") == "other.py:7"
    assert step_cycles._short("") == "?"


def test_bad_arguments_are_usage_errors(capsys):
    with pytest.raises(SystemExit) as e:
        step_cycles.main(["--envs", "0"])
    assert e.value.code == 2 and "--envs" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        step_cycles.main(["--topic", "geology"])
    assert e.value.code == 2 and "--topic needs --corpus" in capsys.readouterr().err


@pytest.mark.slow  # ≈ 1 CPU-minute: the child compiles every kernel into a fresh numba cache, with line tables
@needs_objdump
def test_a_quick_run_names_the_steps_functions_and_lines(tmp_path):
    assert step_cycles.main(["--quick", "--envs", "4", "--steps", "20000", "--warmup", "2000", "--interval-ms", "1",
                             "--functions", "3", "--out", str(tmp_path)]) == 0
    out = json.loads((tmp_path / "step_cycles.json").read_text())
    assert out["line_tables"] and out["objects_placed"] == out["objects"] > 0
    assert out["samples"] == sum(f["samples"] for f in out["functions"]) > 0
    assert sum(f["share"] for f in out["functions"]) == pytest.approx(1.0)
    detailed = [f for f in out["functions"] if "lines" in f]
    assert detailed and all(f["name"].startswith(("gym_crawl.", "NRT_", "numba.")) for f in detailed)
    assert any(x["line"].endswith(".py:" + x["line"].rsplit(":", 1)[1]) and x["source"]
               for f in detailed for x in f["lines"]), "some samples carry a source line and its text"
    assert all(ins["context"][-1]["offset"] == ins["offset"] for f in detailed for ins in f["instructions"]
               if ins["context"])
    assert "Hottest instructions" in (tmp_path / "step_cycles.md").read_text()
