#!/bin/sh
# lint/cppcheck: scripts/lint.sh cppcheck over the tree (make lint runs the same).
exec sh "$SCORCH_SRC/scripts/lint.sh" cppcheck "$SCORCH_BUILD"
