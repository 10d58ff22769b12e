#!/bin/sh
# lint/format: scripts/lint.sh format over the tree (make lint runs the same).
exec sh "$SCORCH_SRC/scripts/lint.sh" format "$SCORCH_BUILD"
