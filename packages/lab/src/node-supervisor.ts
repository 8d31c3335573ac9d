/**
 * What runs a lab node: its lab supervisor (by socket) or its own systemd user unit. Its own
 * module so that the node policy (policy.ts) and the dev plugins (dev-plugins.ts) name it without
 * importing each other.
 */
import type { NodeSupervisor } from '@fleet/core';

export type LabNodeSupervisor = Extract<NodeSupervisor, { kind: 'lab' } | { kind: 'systemd-user' }>;
