#!/bin/sh
# lint/tidy: scripts/lint.sh tidy over the tree (make lint runs the same).
exec sh "$SCORCH_SRC/scripts/lint.sh" tidy "$SCORCH_BUILD"
