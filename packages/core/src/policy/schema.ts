/**
 * The node policy file, `~/.config/fleet/node-policy.yaml` (contract §5.1, docs/node-policy.md):
 * everything a node executes or writes beyond a domain's declared default paths. It is written on
 * the node itself (`fleet node-policy init`, `fleet lab up`, or by hand) and never by a config
 * verb, a wire route or a bootstrap bundle. Strict: an unknown field is an error, and so is
 * anything that could reach fleet's own state.
 *
 * The schema is here, in core, because it is a file format: the controller enforces it, the
 * operator side validates a file with `fleet validate --node-policy`.
 */
import '../zod-config.js'; // zod configured before this module builds its schemas
import * as z from 'zod';
import { isFleetOwnPath } from './fleet-paths.js';
import { isBroadPattern, parseHomePattern, patternReachesFleetState } from './pattern.js';
import { isHomePath } from '../paths.js';
import { parseSshEd25519PublicKey } from '../runtime/sshsig.js';
import {
  absoluteDirectory,
  actionIdSchema,
  hasControl,
  isAbsoluteProgram,
  supervisorSchema,
} from '../schemas/node-policy.js';
import { SUPERVISORS } from '../schemas/supervisors.js';
import { toolNameSchema } from '../schemas/tool-name.js';

export const NODE_POLICY_VERSION = 1;

/** Where the policy lives, `~/`-relative to the node's home. */
export const NODE_POLICY_PATH = '~/.config/fleet/node-policy.yaml';

/** How long a coupled action may run by default, and at most (an install is bounded at 30 s). */
export const DEFAULT_ACTION_TIMEOUT_SECONDS = 10;
export const MAX_ACTION_TIMEOUT_SECONDS = 25;
/** What an action whose output may travel back returns by default, and at most. */
export const DEFAULT_ACTION_OUTPUT_BYTES = 1024;
export const MAX_ACTION_OUTPUT_BYTES = 4096;

/** A program in the node's home (`~/bin/check`): expanded to the home when it runs (`actions.ts`). */
function isHomeProgram(path: string): boolean {
  return path.startsWith('~/') && path.length > 2 && !path.split('/').includes('..');
}

const domainName = z.lazy(() =>
  z.string().regex(/^[a-z][a-z0-9-]*$/, 'must be a domain name (lower-case letters, digits, -)'),
);

const fileId = z.lazy(() =>
  z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "must be one of the domain's file or derived-path ids"),
);

/** Problems of one pattern: malformed, about fleet's own state, or broad without `broad: true`. */
function patternProblem(value: string, broad: boolean): string | undefined {
  try {
    parseHomePattern(value);
  } catch (error) {
    return (error as Error).message;
  }
  if (patternReachesFleetState(value)) {
    return "names fleet's own state (~/.local/state/fleet/, ~/.local/share/fleet/, the env files, the node policy, the credentials): never a domain's path";
  }
  if (!broad && isBroadPattern(value)) {
    return `${value} is broad: its first segment under ~/ is a glob, so it reaches every directory of the home (~/.ssh, ~/.config/systemd/user, …); if that is meant, write it as { pattern: '${value}', broad: true }`;
  }
  return undefined;
}

/**
 * One entry of `paths.<id>` or `patterns`: a pattern, or `{ pattern, broad: true }` for one whose
 * first segment is a glob (`~/.*` + `/**`): the policy says, next to it, that it means the whole
 * home (docs/node-policy.md). The shape is checked first, then the pattern, so a problem is
 * reported as itself rather than as "matches neither form".
 */
const homePattern = z.lazy(() =>
  z
    .union([
      z.string(),
      z.strictObject({
        pattern: z.string(),
        broad: z.literal(true, {
          message: 'must be true (a pattern that is not broad is a string)',
        }),
      }),
    ])
    .superRefine((entry, ctx) => {
      const text = typeof entry === 'string' ? entry : entry.pattern;
      const problem = patternProblem(text, typeof entry !== 'string');
      if (problem === undefined) return;
      ctx.addIssue({
        code: 'custom',
        message: problem,
        ...(typeof entry === 'string' ? {} : { path: ['pattern'] }),
      });
    }),
);

const argument = z.lazy(() =>
  z
    .string({ message: 'must be a string (one argument)' })
    .min(1, 'must not be empty')
    .max(4096, 'must be at most 4096 characters')
    .refine((arg) => !hasControl(arg), 'must not contain control characters'),
);

export const policyActionSchema = z.lazy(() =>
  z
    .strictObject({
      /**
       * The program and its arguments, run as they are: no shell, no PATH lookup. The program is an
       * absolute path (or `~/…`) — what the audit record names is exactly what ran. `~` and a
       * leading `~/` are the node's home; `{file}` is the staged file a validate action checks.
       */
      argv: z
        .array(argument, { message: 'must be an argv array (["/abs/program", "arg", …])' })
        .min(1, 'must name a program')
        .max(64, 'must have at most 64 arguments')
        .refine((argv) => isAbsoluteProgram(argv[0] ?? '') || isHomeProgram(argv[0] ?? ''), {
          message:
            "the program (first element) must be an absolute path: no PATH lookup, no shell (or ~/…, in the node's home)",
          path: [0],
        }),
      /** Killed after this many seconds (default 10, at most 25: an install is bounded at 30 s). */
      timeoutSeconds: z
        .number()
        .int()
        .min(1)
        .max(MAX_ACTION_TIMEOUT_SECONDS)
        .default(DEFAULT_ACTION_TIMEOUT_SECONDS),
      /** `discard` (default): nothing the action prints leaves the node. `return`: redacted, cut. */
      output: z.enum(['discard', 'return']).default('discard'),
      /** With `output: return`: at most this many bytes travel back (default 1024, at most 4096). */
      outputBytes: z.number().int().min(1).max(MAX_ACTION_OUTPUT_BYTES).optional(),
    })
    .refine((action) => action.outputBytes === undefined || action.output === 'return', {
      message: 'only with output: return',
      path: ['outputBytes'],
    }),
);

const domainPolicyObject = z.lazy(() =>
  z.strictObject({
    /**
     * Per file or derived-path id: where a host's variables may move it (exact paths or patterns).
     * A domain's declared default paths are always accepted.
     */
    paths: z.record(fileId, z.array(homePattern).min(1).max(64)).optional(),
    /** For a domain whose paths come from the repo (the `files` domain, contract §10.4). */
    patterns: z.array(homePattern).max(256).optional(),
    /** The coupled actions this domain's installs may run, by id. */
    actions: z.record(actionIdSchema, policyActionSchema).optional(),
    /** Unattended installs (contract §10.3); always refused for a process-coupled domain. */
    unattended: z.enum(['allow', 'deny']).default('deny'),
  }),
);

/** One domain's section; `router:` with nothing under it (YAML null) means `{}`. */
const domainPolicySchema = z.lazy(() => z.preprocess((value) => value ?? {}, domainPolicyObject));

const homeDirectory = z.lazy(() =>
  z
    .string()
    .refine(isHomePath, 'must be a ~/-relative directory inside the node home')
    .refine((path) => !isHomePath(path) || !isFleetOwnPath(path), {
      message: "is fleet's own state: a managed file can never link into it",
    }),
);

/** An OpenSSH `ssh-ed25519 AAAA… comment` line a release may be signed with (ADR 0019). */
const trustedKeySchema = z.lazy(() =>
  z
    .string()
    .max(4096)
    .superRefine((line, ctx) => {
      try {
        parseSshEd25519PublicKey(line);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
      }
    }),
);

/**
 * Which runtimes this node stages (ADR 0019, docs/node-policy.md): a runtime change needs the
 * artifact's release signature by one of `trustedKeys`; without a trusted key a runtime change is
 * refused unless `allowUnsigned` (a hand-made test node). Absent: no trusted key, unsigned denied.
 */
const runtimePolicySchema = z.lazy(() =>
  z.strictObject({
    /** OpenSSH public key lines (`ssh-ed25519 AAAA… comment`; the comment is ignored). */
    trustedKeys: z.array(trustedKeySchema).max(32).default([]),
    /** Stage an artifact that carries no signature (never one whose signature does not verify). */
    allowUnsigned: z.boolean().default(false),
  }),
);

/** An npm package name (`fleet-plugin-x`, `@acme/fleet-x`), as `npm` accepts one. */
const packageName = z.lazy(() =>
  z
    .string()
    .max(214)
    .regex(
      /^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/,
      'must be an npm package name (fleet-plugin-x, @scope/fleet-x)',
    ),
);

/**
 * A lab node's own section (contract §13, docs/plugin-authoring.md "The dev loop"): the plugins
 * `fleet plugins link`ed into the operator's CLI that this lab controller loads straight from their
 * folders — Terraform's `dev_overrides` for fleet. Only `fleet lab up` writes it, and only a lab
 * node's policy may have it (supervisor `lab`, checked below; the controller also checks that the
 * lab supervisor runs it): a node that is not a lab's runs only what its signed runtime carries.
 */
const labPolicySchema = z.lazy(() =>
  z.strictObject({
    devPlugins: z
      .array(z.strictObject({ name: packageName, root: absoluteDirectory }))
      .max(32)
      .default([]),
  }),
);

export const nodePolicySchema = z.lazy(() =>
  z
    .strictObject({
      version: z.literal(NODE_POLICY_VERSION, { message: `must be ${NODE_POLICY_VERSION}` }),
      /** The domains this node serves: a domain not listed is not served (`DOMAIN_NOT_SERVED`). */
      domains: z.record(domainName, domainPolicySchema).default({}),
      /** What `fleet version` may run here: each tool's `--version`, resolved on `path`. */
      versions: z
        .strictObject({
          tools: z.array(toolNameSchema).max(32).default([]),
          /** The login PATH, in order (default: the controller's own PATH). */
          path: z.array(absoluteDirectory).max(64).optional(),
        })
        .default({ tools: [] }),
      /** Directories a managed file may be a symbolic link into (`~/.zshrc -> ~/dotfiles/zshrc`). */
      symlinkInto: z.array(homeDirectory).max(64).default([]),
      /** Whether a bootstrap may install a runtime here, and through which supervisors (contract §12). */
      bootstrap: z
        .strictObject({
          allow: z.boolean(),
          supervisors: z
            .array(z.enum(SUPERVISORS.filter((s) => s !== 'none') as [string, ...string[]]))
            .optional(),
        })
        .default({ allow: false }),
      /** The supervisor that runs this node's controller (for coupled restarts: never a request's). */
      supervisor: supervisorSchema.optional(),
      /** The release signatures a runtime change needs (ADR 0019); absent: none trusted. */
      runtime: runtimePolicySchema.optional(),
      /** A lab node's dev plugins (`fleet lab up` only); refused unless the lab supervisor runs it. */
      lab: labPolicySchema.optional(),
    })
    .refine((policy) => policy.lab === undefined || policy.supervisor?.kind === 'lab', {
      message:
        "only a lab node's policy has a lab section (fleet lab up writes it, with supervisor: { kind: lab }): any other node runs only the plugins its signed runtime carries",
      path: ['lab'],
    }),
);

export type NodePolicy = z.infer<typeof nodePolicySchema>;
export type NodePolicyInput = z.input<typeof nodePolicySchema>;
export type DomainPolicy = z.infer<typeof domainPolicyObject>;
export type PolicyAction = z.infer<typeof policyActionSchema>;
/** A pattern entry of a policy: `'~/x/**'`, or `{ pattern: '~/.*' + '/**', broad: true }`. */
export type PolicyPattern = z.infer<typeof homePattern>;
export type NodeRuntimePolicy = z.infer<typeof runtimePolicySchema>;
export type NodeLabPolicy = z.infer<typeof labPolicySchema>;
