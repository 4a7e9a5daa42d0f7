"""The compiled kernels (Cython, built by ``pip install`` with gcc); everything
else about the package is in pyproject.toml. Two at a time: an install (and
the wheel the packaging test builds) waits about half as long on two cores."""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(ext_modules=cythonize(
    [Extension("engine.sparql.exec.closure_kernel", ["engine/sparql/exec/closure_kernel.pyx"],
               extra_compile_args=["-O2"]),
     Extension("engine.sparql.exec.intersection_kernel", ["engine/sparql/exec/intersection_kernel.pyx"],
               extra_compile_args=["-O2"]),
     Extension("engine.store.span_hash_kernel", ["engine/store/span_hash_kernel.pyx"],
               extra_compile_args=["-O2"]),
     Extension("engine.sparql.syntax.tokenizer_kernel", ["engine/sparql/syntax/tokenizer_kernel.pyx"],
               extra_compile_args=["-O2"]),
     Extension("engine.store.spelling_lookup_kernel", ["engine/store/spelling_lookup_kernel.pyx"],
               extra_compile_args=["-O2"]),
     Extension("engine.store.sorted_triples_kernel", ["engine/store/sorted_triples_kernel.pyx"],
               extra_compile_args=["-O2"]),
     Extension("engine.store.adjacency_kernel", ["engine/store/adjacency_kernel.pyx"],
               extra_compile_args=["-O2"]),
     Extension("engine.store.key_probe_kernel", ["engine/store/key_probe_kernel.pyx"],
               extra_compile_args=["-O2"]),
     Extension("engine.store.distinct_ids_kernel", ["engine/store/distinct_ids_kernel.pyx"],
               extra_compile_args=["-O2"]),
     Extension("engine.sparql.results.json_rows_kernel", ["engine/sparql/results/json_rows_kernel.pyx"],
               extra_compile_args=["-O2"]),
     Extension("engine.stream.batch_scan_kernel", ["engine/stream/batch_scan_kernel.pyx"],
               extra_compile_args=["-O2"])],
    language_level=3,
    nthreads=2,
), options={"build_ext": {"parallel": 2}})
