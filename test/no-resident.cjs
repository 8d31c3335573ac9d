// Loaded by mocha before any test (.mocharc.json): every fleet a test starts runs in its own
// process and starts no resident operator process (docs/resident.md), unless the test sets
// FLEET_RESIDENT itself — a test run must leave no process behind, nor use the resident of the
// person running it.
process.env.FLEET_RESIDENT = 'off';
