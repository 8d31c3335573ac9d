/**
 * `@fleet/core/zod`: the zod that fleet's own packages build their schemas with. The controller,
 * the operator's modules and the bundled plugins import it here (`import * as z from
 * '@fleet/core/zod'`) instead of from `zod`, so a process loads one copy of zod — the one inside
 * core's bundle, which leaves out zod's locales and what fleet never calls (docs/contract.md §14:
 * the CLI loads what the verb needs; the controller's idle memory). A schema built here and one
 * built by core are the same zod's, so they compose and `instanceof z.ZodError` holds across them.
 *
 * The list is what fleet's packages use plus the common constructors a plugin's file format
 * needs; a third-party plugin may import `zod` itself (it then loads a second copy, nothing else).
 */
import './zod-config.js'; // zod configured before a plugin builds its first schema

export {
  ZodError,
  array,
  boolean,
  discriminatedUnion,
  enum,
  int,
  literal,
  looseObject,
  nullable,
  number,
  object,
  optional,
  record,
  strictObject,
  string,
  tuple,
  union,
  unknown,
} from 'zod';
export type { ZodType, infer, input, output } from 'zod';
