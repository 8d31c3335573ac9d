import type { DriftItem, DriftLayer, JsonObject, JsonValue } from './drift.js';
import type { NodeContext } from './node-context.js';

/** What the operator side knows about a host that a prober evaluates facts against. */
export interface ProbeDesired {
  /** The host's name in fleet.yaml. */
  readonly host: string;
  /** Its variables (`hosts/<host>.yaml`): no secrets, ever. */
  readonly variables: Readonly<Record<string, string>>;
  /** fleet.yaml's `canonicalVersion`. */
  readonly canonicalVersion: string;
  /** The parameters `collect` was called with. */
  readonly parameters: JsonObject;
}

/**
 * A prober (contract §6): its node half collects facts read-only (an installed copy, a supervisor
 * unit, tool versions) as JSON; its operator half evaluates them into drift items. Facts leave
 * the node, so they are redacted like any other content.
 */
export interface Prober<Facts extends JsonValue = JsonValue> {
  /** Its id, as its descriptor declares it. */
  readonly id: string;
  /** The drift layer its items belong to. */
  readonly layer: DriftLayer;
  /** Node half, read-only: gather facts as JSON (they leave the node, redacted). */
  collect(ctx: NodeContext, parameters: JsonObject): Promise<Facts>;
  /** Operator half, pure: the drift items the facts amount to for this host. */
  evaluate(facts: Facts, desired: ProbeDesired): readonly DriftItem[];
}
