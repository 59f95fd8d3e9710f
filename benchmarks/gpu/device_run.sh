#!/usr/bin/env bash
# Build cuPDLPx on a CUDA machine without internet and run the GPU benchmark (issue 13).
# Expects, in the repository root: .vendor/ with cupdlpx-0.3.0.tar.gz and pslp-0.0.8.tar.gz (../shared/vendor), and
# .whl/ with cp312 wheels of the pure-CPU dependencies missing on the machine (cvxpy, clarabel, ecos, highspy, osqp,
# qdldl). Usage: bash benchmarks/gpu/device_run.sh OUTDIR [SIZES] [--tests|''] [bench_scale.py options...]
set -u
OUTDIR=${1:-/tmp/out}; SIZES=${2:-300,1000,2000,4000}; TESTS=${3:-}; shift $(( $# < 3 ? $# : 3 ))
mkdir -p "$OUTDIR" /tmp/site /tmp/build
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
if ! python3 -c "import cupdlpx" 2>/dev/null; then  # no prebuilt wheel in .whl: build one (about 20 s)
  (cd /tmp/build && tar xzf "$OLDPWD/.vendor/cupdlpx-0.3.0.tar.gz" && tar xzf "$OLDPWD/.vendor/pslp-0.0.8.tar.gz" &&
   CMAKE_ARGS="-DCMAKE_CUDA_ARCHITECTURES=90 -DFETCHCONTENT_SOURCE_DIR_PSLP=/tmp/build/pslp-0.0.8 -DFETCHCONTENT_FULLY_DISCONNECTED=ON" \
   CMAKE_BUILD_PARALLEL_LEVEL=16 python3 -m pip wheel -q --no-build-isolation --no-deps -w /tmp/build/wheel ./cupdlpx-0.3.0) \
   > "$OUTDIR/build.log" 2>&1 || { tail -40 "$OUTDIR/build.log"; exit 1; }
  python3 -m pip install -q --no-index --no-deps --no-cache-dir --target /tmp/site /tmp/build/wheel/cupdlpx-*.whl || exit 1
  cp /tmp/build/wheel/cupdlpx-*.whl "$OUTDIR/"
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c "import cupdlpx, numpy, scipy, cvxpy; print('cupdlpx', cupdlpx.__file__, 'numpy', numpy.__version__, 'scipy', scipy.__version__, 'cvxpy', cvxpy.__version__)"
python3 -c "from pml_design.design.linear.backends import backend_available as b; print('CUPDLPX usable:', b('CUPDLPX'))"
if [ "$TESTS" = "--tests" ]; then
  python3 -m pytest -q -p no:cacheprovider tests/test_gpu.py tests/test_sparse_lp.py 2>&1 | tail -15
fi
python3 benchmarks/bench_scale.py --gpu --gpu-sizes "$SIZES" --outdir "$OUTDIR" "$@"
