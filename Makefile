# tfc: the two set-up commands on a fresh machine are `make book` and `make test`.
SHELL := /bin/bash
MODE ?= default
DEVICE ?=
NB ?=
CHECKPOINT ?=
export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PYTHONHASHSEED := 0
export MPLBACKEND := Agg
# this clone's code wins over whatever clone last did the venv's editable install (the venv is shared
# between clones of the same lock files; see scripts/setup_env.sh)
export PYTHONPATH := $(CURDIR)$(if $(PYTHONPATH),:$(PYTHONPATH))

VENV := .venv
PY := $(VENV)/bin/python

.PHONY: venv test test-fast notebooks book html chapter reproduce bench peers-venv clean env

# (re)build or reuse the cached virtual environment; cheap when the lock files did not change
venv:
	@scripts/setup_env.sh >/dev/null

env: venv
	$(VENV)/bin/tfc env

# pytest's exit code 5 (no tests collected) is not a failure here
test: venv
	$(PY) -m pytest -q || [ $$? -eq 5 ]

# the chapters are MyST markdown (notebooks/*.md); tfc book run converts each to book/generated/_source/*.ipynb
# (jupytext, the parameters tag kept) and papermill executes that into book/generated/*.ipynb
notebooks: venv
	$(VENV)/bin/tfc book run --mode $(MODE) $(if $(DEVICE),--device $(DEVICE)) $(if $(CHECKPOINT),--checkpoint $(CHECKPOINT))

html: venv
	$(VENV)/bin/tfc book build

book: notebooks html
	@echo "book: $(CURDIR)/book/_build/html/index.html"

# one chapter, e.g. make chapter NB=02_true_auc CHECKPOINT=my/model DEVICE=cuda
chapter: venv
	@test -n "$(NB)" || { echo "usage: make chapter NB=<notebook stem> [CHECKPOINT=...] [DEVICE=...]"; exit 2; }
	$(VENV)/bin/tfc book run --mode $(MODE) --only $(NB) $(if $(DEVICE),--device $(DEVICE)) $(if $(CHECKPOINT),--checkpoint $(CHECKPOINT))
	$(VENV)/bin/tfc book build

# recompute everything (training, scoring) and build the book
reproduce: MODE := full
reproduce: venv
	$(VENV)/bin/tfc train reproduce $(if $(DEVICE),--device $(DEVICE))
	$(VENV)/bin/tfc book run --mode full $(if $(DEVICE),--device $(DEVICE))
	$(VENV)/bin/tfc book build

# the peers (summac 0.0.4, bert-score) live in their own venv: benchmarks/peers/setup.sh (not the project's requirements)
peers-venv:
	@benchmarks/peers/setup.sh >/dev/null

# every benchmarks/bench_*.py: scorer throughput, peers side by side, cost growth, training, GPU (skips without
# one), make book timing; results in benchmarks/results/*.json|md
bench: venv peers-venv
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf book/_build book/generated
