"""One module per chapter: the tables, figures and glue values that chapter computes.

A notebook cell calls a function here, glues its values and shows its table or figure.
"""
