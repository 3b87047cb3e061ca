"""The machine facts a report records beside its timings."""

from __future__ import annotations

from pathlib import Path

from contenox.host import cpu, host_facts

CPUINFO = ("processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 vaes\n\n"
           "processor\t: 1\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 vaes\n")


def test_the_cpu_and_the_instruction_sets_its_kernels_depend_on(tmp_path: Path) -> None:
    (tmp_path / "cpuinfo").write_text(CPUINFO)
    assert cpu(tmp_path / "cpuinfo") == ("AMD EPYC", ["avx2", "avx512f", "avx512_bf16"])
    (tmp_path / "avx2").write_text(CPUINFO.replace(" avx512f avx512_bf16", ""))
    assert cpu(tmp_path / "avx2")[1] == ["avx2"]
    facts = host_facts(tmp_path / "cpuinfo")
    assert facts["cpu_features"] == ["avx2", "avx512f", "avx512_bf16"] and facts["cpus"]
    assert cpu(tmp_path / "missing")[0]  # no cpuinfo: the platform's name, never empty
