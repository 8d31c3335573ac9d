/**
 * `@fleet/core/di`: the dependency-injection container fleet's CLI builds its verbs' services
 * from (docs/architecture.md "Services"; docs/adr/0026-services-on-tsyringe.md). tsyringe, with
 * the Reflect metadata polyfill its decorators read the constructor parameter types through, set
 * up here first so that any class decorated after importing this entry has its metadata.
 *
 * An entry of its own: the controller and `--help` never load it, and a verb loads it from core's
 * one bundled file (scripts/bundle.mjs), not as tsyringe's modules.
 *
 * The container holds services and the host's registry: each plugin's descriptors are registered
 * in it under the registry's tokens ({@link containerStore}). Never a plugin's code: plugins still
 * hand over plain descriptors through `fleet:register` (contract §2), and may carry their own copy
 * of core and of this container.
 */
import 'reflect-metadata';
import type { DependencyContainer, InjectionToken } from 'tsyringe';
import type { Registered, Registry, RegistryStore } from './registry/registry.js';

export { container, inject, injectable, singleton } from 'tsyringe';
export type { DependencyContainer, InjectionToken } from 'tsyringe';

/**
 * Where a service gets the registry of the loaded plugins. A source, not the registry itself: the
 * registry runs every plugin's `fleet:register` hook, so it is assembled the first time a service
 * asks, and a verb that needs no plugin never pays for it.
 */
export interface RegistrySource {
  /** The assembled registry (the same one on every call of one command). */
  registry(): Promise<Registry>;
}

/** The container token of the {@link RegistrySource}: `Symbol.for`, so every copy names it. */
export const REGISTRY_SOURCE: InjectionToken<RegistrySource> = Symbol.for(
  'fleet.di.registry-source',
);

/**
 * A registry's store in a container: each descriptor a plugin registered becomes a `useValue`
 * registration under its `REGISTRY_TOKENS` token, and a token's list is the container's
 * `resolveAll` (docs/adr/0027-the-registry-lives-in-the-container.md). What a test registered
 * under a token in the same container before the registry was built is listed with the plugins'
 * entries; a token the container (or a parent) lacks lists nothing.
 */
export function containerStore(scope: DependencyContainer): RegistryStore {
  return {
    add(token, entry) {
      scope.register<Registered<unknown>>(token, { useValue: entry });
    },
    list: (token) =>
      scope.isRegistered(token, true) ? scope.resolveAll<Registered<unknown>>(token) : [],
  };
}
