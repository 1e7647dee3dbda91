.PHONY: test serve bench bench-locomo docs lint

# Install everything (dev extras, PostgreSQL when missing) and run every test on both backends.
test:
	./scripts/test.sh

# Install the server and run it on the embedded vault over streamable HTTP.
serve:
	python3 -m venv .venv && .venv/bin/pip install --quiet -e . && .venv/bin/kaeru serve --http

bench:
	.venv/bin/python -m bench.run

bench-locomo:
	.venv/bin/python -m bench.locomo

docs:
	.venv/bin/python scripts/gen_tools_doc.py

lint:
	.venv/bin/ruff check src tests bench && .venv/bin/ruff format --check src tests bench && .venv/bin/mypy
