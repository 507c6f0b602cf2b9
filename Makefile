# One virtual environment, made from the repo's own files. `make demo` and `make test` are the
# two commands a newcomer needs; both set the environment up first if it is missing.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed

.PHONY: setup lock demo test test-areal test-sglang lmms-env test-lmms lint bench nano nano-base clean

EXTRAS  = .[serve,studio,evals,train,postgres]
# requirements/constraints.txt holds every version the suite last passed with: a release
# upstream (PyAV 18.1.1 once) reaches .venv only when `make lock` rewrites that file.
LOCK    = requirements/constraints.txt

$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c $(LOCK) -e "$(EXTRAS)" --group dev
	touch $(STAMP)

setup: $(STAMP)

# The newest releases that pyproject.toml admits, in a scratch environment, written to $(LOCK).
lock:
	rm -rf .venv-lock && $(PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install --quiet --upgrade pip
	.venv-lock/bin/pip install --quiet -e "$(EXTRAS)" --group dev
	{ sed -n '1,3p' $(LOCK); .venv-lock/bin/pip freeze --exclude-editable | sed 's/+cpu$$//'; } \
		> $(LOCK).new && mv $(LOCK).new $(LOCK)
	rm -rf .venv-lock
	rm -rf $(LMMS_VENV) && $(MAKE) lmms-env LMMS_CONSTRAINTS=
	{ sed -n '1,2p' $(LMMS_LOCK); $(BIN)/uv pip freeze --python $(LMMS_VENV)/bin/python \
		| grep -v -e '^-e' -e '^torch==' -e '^paravt-graph'; } > $(LMMS_LOCK).new
	mv $(LMMS_LOCK).new $(LMMS_LOCK) && touch $(LMMS_VENV)/.installed

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
LMMS_LOCK = requirements/lmms-eval-constraints.txt
LMMS_CONSTRAINTS = --constraints $(LMMS_LOCK)
$(LMMS_VENV)/.installed: requirements/lmms-eval.txt requirements/lmms-eval-overrides.txt $(LMMS_LOCK) pyproject.toml $(STAMP)
	$(PYTHON) -m venv $(LMMS_VENV)
	$(LMMS_VENV)/bin/pip install --quiet "torch==2.13.0"
	$(BIN)/uv pip install --quiet --python $(LMMS_VENV)/bin/python -r requirements/lmms-eval.txt \
		--overrides requirements/lmms-eval-overrides.txt $(LMMS_CONSTRAINTS)
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

# Rebuild the shipped paravt-nano, ship it to assets/, then measure it on the held-out split.
# Two stages on the kept base, assets/paravt-nano-base (this recipe's base stage as the code
# stood at 4667e68, bench/nano_rebuild.json; today's base code trains another base: `make
# nano-base`, and docs/nano.md, "`make nano` from nothing"):
# - roles: chat phrasings and every graph role, spaced seconds, a verifier on the frames a note
#   cites, after its own data stage (47 minutes on 2 CPU cores);
# - honest: 600 gentler steps on from it, over the same data, with questions the videos cannot
#   answer in composed wordings (training.nano.off_topic), so the nano says what it can see
#   (14.4 minutes).
# Then the measure (8.5 minutes): about 70 minutes in all, peak 4.5 GB. Before the lock
# (requirements/constraints.txt) these stages made 841939a30ff2 and the shipped 16084fc84449 to
# the byte (bench/nano_rebuild_make_nano{,_honest}.json); under it they make 4bd86b4324e8 and
# 1da62e501ba6, a nano of other weights and like figures (bench/nano_eval_make_nano_locked.json;
# docs/nano.md, "`make nano` under the lock").
NANO_ROLES = --sft-steps 2600 --grpo-steps 0 --claim-weight 1 --shares 0.22 0.4 0.25 \
	--phrased 4 --every-needle-grounded --spaced-seconds --sub-agent-base-spelling
NANO_HONEST = --sft-steps 600 --learning-rate 3e-4 --grpo-steps 0 --claim-weight 1 \
	--shares 0.3 0.3 0.25 --phrased 4 --every-needle-grounded --spaced-seconds \
	--sub-agent-base-spelling --off-topic 1
nano: $(STAMP)
	OMP_NUM_THREADS=2 $(BIN)/python -m training.nano.rebuild --out build/nano \
		--base assets/paravt-nano-base $(NANO_ROLES)
	OMP_NUM_THREADS=2 $(BIN)/python -m training.nano.rebuild --out build/nano-honest \
		--data build/nano/data --base build/nano/sft $(NANO_HONEST) --ship
	OMP_NUM_THREADS=2 $(BIN)/python bench/nano_eval.py

# A base from nothing by today's code (data, SFT, GRPO and PARA-GRPO; about 110 minutes), not
# shipped; a roles stage starts on it with --base build/nano-base/para_grpo/checkpoint.
nano-base: $(STAMP)
	OMP_NUM_THREADS=2 $(BIN)/python -m training.nano.rebuild --out build/nano-base

clean:
	rm -rf $(VENV) $(AREAL_API) $(SGLANG_API) $(LMMS_VENV) .paravt bench/.cache
