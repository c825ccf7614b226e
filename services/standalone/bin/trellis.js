#!/usr/bin/env node
// The `trellis` command: runs the compiled CLI (build first with `npm run build`).
require('../dist/cli/main.js');
