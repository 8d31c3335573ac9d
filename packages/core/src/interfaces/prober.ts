import type { DriftItem, DriftLayer, JsonObject, JsonValue } from './drift.js';
import type { NodeContext } from './node-context.js';

/** What the operator side knows about a host that a prober evaluates facts against. */
export interface ProbeDesired {
  readonly host: string;
  readonly variables: Readonly<Record<string, string>>;
  readonly canonicalVersion: string;
  readonly parameters: JsonObject;
}

/**
 * A prober (SPEC §6): its node half collects facts read-only (an installed copy, a supervisor
 * unit, tool versions) as JSON; its operator half evaluates them into drift items. Facts leave
 * the node, so they are redacted like any other content.
 */
export interface Prober<Facts extends JsonValue = JsonValue> {
  readonly id: string;
  readonly layer: DriftLayer;
  collect(ctx: NodeContext, parameters: JsonObject): Promise<Facts>;
  evaluate(facts: Facts, desired: ProbeDesired): readonly DriftItem[];
}
