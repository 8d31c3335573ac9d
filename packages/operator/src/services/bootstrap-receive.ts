/**
 * `fleet bootstrap receive`'s service: the node side of the SSH recovery path, the forced command
 * of the operator's recovery key. It serves the one verb `SSH_ORIGINAL_COMMAND` names, read as
 * data, after asking the sshd that runs it whether the environment it lets in is safe
 * (bootstrap/receiver.ts, bootstrap/sshd-check.ts; contract §12). The registry comes from the
 * container the CLI builds (docs/architecture.md "Services"), asked for only by a verb that
 * needs plugins (`apply`).
 *
 * Not a method of `BootstrapService`: that one is the operator's seat (plan, apply, status,
 * rollback, over the controller or SSH) and needs no plugin; this one runs on the node, as the
 * forced command of every recovery request, needs the registry (its `apply`), and writes through
 * the controller's own audit chain and safe-path walk — `@fleet/controller`'s index, which the
 * operator-side verbs never load (this module: 139 files; bootstrap.ts: 28; both: 155).
 */
import { inject, injectable, REGISTRY_SOURCE, type RegistrySource } from '@fleet/core/di';
import { runReceiver, type ReceiverOptions } from '../bootstrap/receiver.js';
import { checkSshdEnvironment } from '../bootstrap/sshd-check.js';

/**
 * What the forced command hands over: the home, its own version, the raw request and its
 * streams, and the key it is forced for. The registry is the service's; the sshd is always
 * checked.
 */
export type BootstrapReceiveOptions = Pick<
  ReceiverOptions,
  'home' | 'version' | 'originalCommand' | 'stdin' | 'stdout' | 'stderr' | 'keyFingerprint'
>;

@injectable()
export class BootstrapReceiverService {
  constructor(@inject(REGISTRY_SOURCE) private readonly plugins: RegistrySource) {}

  /** Serves one request; resolves to the process exit code. */
  run(options: BootstrapReceiveOptions): Promise<number> {
    return runReceiver({
      ...options,
      loadRegistry: () => this.plugins.registry(),
      // Run as the forced command: the sshd that runs it must not let the environment in.
      checkSshd: checkSshdEnvironment,
    });
  }
}
