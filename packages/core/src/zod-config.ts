/**
 * zod's settings for every schema fleet builds, made once, before any schema exists: each module
 * of core that builds schemas imports this one first (`import '../zod-config.js'`), and so does
 * `@fleet/core/zod` (src/zod.ts), through which the controller, the operator's modules and the
 * bundled plugins build theirs; an imported module is evaluated before its importer, so none of
 * those schemas is built before the setting. zod keeps the setting on `globalThis`, so it holds too
 * for a third-party plugin that builds its schemas with a copy of zod of its own (4.6 does).
 *
 * `jitless`: zod compiles each object schema's parser from generated source (`new Function`) when
 * the schema is built. fleet parses each schema a few times per process — a CLI call parses a
 * handful of documents, a controller one request at a time — so the compilation costs more than
 * it saves: without it a one-host drift took 29 ms less and a one-host `config install` 71 ms less
 * (medians of 15 interleaved runs each), and a 1,000-host drift, which parses a thousand answers in
 * one process, was no slower (contract §14). It also keeps fleet's processes free of code
 * generated from strings at run time.
 */
import { config } from 'zod';

config({ jitless: true });
