/**
 * `@fleet/lab`: the lab (contract §13) — real controllers on 127.0.0.1, each under a small lab
 * supervisor (or thousands of virtual nodes in one process), the `lab` bootstrap adapter that
 * drives them, and the lab's repository, tokens and node policy. The operator's `fleet lab`
 * commands are its only user. The supervisor's control protocol and its client are here too
 * (supervisor-protocol.ts): a domain's node half reaches its supervisor through core's
 * `ctx.controllerSupervisor()` seam, which the lab's adapter serves.
 */
export * from './adapter.js';
export * from './build.js';
export * from './definition.js';
export * from './down.js';
export * from './dev-plugins.js';
export * from './layout.js';
export * from './restart.js';
export * from './supervisor.js';
export * from './up.js';
export * from './virtual.js';
export * from './node-actions.js';
export * from './supervisor-protocol.js';
