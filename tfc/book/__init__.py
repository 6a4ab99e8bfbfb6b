"""The book side: everything that turns results into the Jupyter Book, and nothing the library needs.

* :mod:`tfc.book.runner` executes the notebooks (papermill) and builds the HTML (Jupyter Book);
* :mod:`tfc.book.glue` glues values under the keys each chapter registers (tfc/book/glue_keys/<chapter>.csv); :mod:`tfc.book.readable` renders every table;
* :mod:`tfc.book.reference` reads the papers' published tables and joins them to ours;
* :mod:`tfc.book.ledger` records what each chapter reproduced; :mod:`tfc.book.provenance` writes the footer;
* :mod:`tfc.book.teach` draws the small pipeline diagrams and writes the exercises;
* :mod:`tfc.book.sphinxext` vendors MathJax for the offline HTML;
* :mod:`tfc.book.chapters` holds one module per chapter: what that chapter computes.

The library (``tfc.data`` ... ``tfc.runs``) never imports this package; ``import-linter`` checks it.
"""

# the chapter footer's read log listens to the library's read hook (tfc.data.reads) from the first
# import of anything in tfc.book on: every runner kernel loads tfc.book.readable at start
from tfc.book import provenance as _provenance  # noqa: E402,F401
