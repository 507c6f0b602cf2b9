# One virtual environment, made from the repo's own files. `make demo` and `make test` are the
# two commands a newcomer needs; both set the environment up first if it is missing.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed

.PHONY: setup demo test test-areal test-sglang lmms-env test-lmms lint bench nano clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[serve,studio,evals,train,postgres]" --group dev
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/python app.py demo

test: $(STAMP)
	$(BIN)/python -m pytest

# The AReaL path against released AReaL's own code (1.0.4's API without its GPU stack, in a
# folder beside .venv that the tests append to sys.path):
# tests/training/areal/test_areal_released.py.
AREAL_API = .areal-api
$(AREAL_API)/.installed: requirements/areal-api.txt $(STAMP)
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps --target $(AREAL_API) \
		-r requirements/areal-api.txt
	touch $@

test-areal: $(AREAL_API)/.installed
	PARAVT_AREAL_API=$(CURDIR)/$(AREAL_API) $(BIN)/python -m pytest \
		tests/training/areal/test_areal_released.py

# The serve flags against released SGLang's and its router's own argument parsers (sglang 0.5.23
# and smg 1.13.0 without their GPU stack, in a folder beside .venv):
# tests/serving/test_sglang_released.py.
SGLANG_API = .sglang-api
$(SGLANG_API)/.installed: requirements/sglang-api.txt $(STAMP)
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps --target $(SGLANG_API) \
		-r requirements/sglang-api.txt
	touch $@

test-sglang: $(SGLANG_API)/.installed
	PARAVT_SGLANG_API=$(CURDIR)/$(SGLANG_API) $(BIN)/python -m pytest \
		tests/serving/test_sglang_released.py
# lmms-eval with this project as its `paravt` model, in an environment of its own beside .venv
# (docs/lmms-eval.md says why): pip puts the machine's CPU torch in first, then uv resolves
# lmms-eval and this checkout around it, with requirements/lmms-eval-overrides.txt leaving
# out torchvision (PyPI's cannot load against the CPU torch) and holding filelock below 4.
LMMS_VENV = .venv-lmms
$(LMMS_VENV)/.installed: requirements/lmms-eval.txt requirements/lmms-eval-overrides.txt pyproject.toml $(STAMP)
	$(PYTHON) -m venv $(LMMS_VENV)
	$(LMMS_VENV)/bin/pip install --quiet "torch==2.13.0"
	$(BIN)/uv pip install --quiet --python $(LMMS_VENV)/bin/python -r requirements/lmms-eval.txt \
		--overrides requirements/lmms-eval-overrides.txt
	touch $@

lmms-env: $(LMMS_VENV)/.installed

test-lmms: $(LMMS_VENV)/.installed
	PARAVT_LMMS_REQUIRED=1 $(BIN)/python -m pytest tests/lmms_plugin/test_lmms_env.py \
		tests/lmms_plugin/test_lmms_eval_cli.py

lint: $(STAMP)
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

bench: $(STAMP)
	$(BIN)/python bench/graph_overhead.py
	$(BIN)/python bench/video_decode.py
	$(BIN)/python bench/run_memory.py
	$(BIN)/python bench/eval_batch.py

# Rebuild paravt-nano from scratch, ship it to assets/, then measure it on the held-out split:
# the base (data, SFT, GRPO and PARA-GRPO; about 80 minutes on 2 CPU cores, the checkpoint kept
# as assets/paravt-nano-base), then the roles stage on it and on its data (chat phrasings and
# every graph role, spaced seconds, a verifier on the frames a note cites; about 44 minutes),
# then 7 for the measure. The roles stage reads the base's data stage: the same code and videos
# make the same traces (a build/nano/data already there is kept, as the rebuild keeps it).
# docs/nano.md has each stage's figures.
NANO_ROLES = --sft-steps 2600 --grpo-steps 0 --claim-weight 1 --shares 0.22 0.4 0.25 \
	--phrased 4 --every-needle-grounded --spaced-seconds --sub-agent-base-spelling
nano: $(STAMP)
	OMP_NUM_THREADS=2 $(BIN)/python -m training.nano.rebuild --out build/nano-base
	mkdir -p build/nano && { [ -e build/nano/data ] || ln -s $(CURDIR)/build/nano-base/data build/nano/data; }
	OMP_NUM_THREADS=2 $(BIN)/python -m training.nano.rebuild --out build/nano \
		--base build/nano-base/para_grpo/checkpoint $(NANO_ROLES) --ship
	OMP_NUM_THREADS=2 $(BIN)/python bench/nano_eval.py

clean:
	rm -rf $(VENV) $(AREAL_API) $(SGLANG_API) $(LMMS_VENV) .paravt bench/.cache
