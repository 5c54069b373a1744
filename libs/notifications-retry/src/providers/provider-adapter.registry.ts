import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { DuplicateProviderKeyError } from '../errors/duplicate-provider-key.error';
import { InvalidProviderAdapterError } from '../errors/invalid-provider-adapter.error';
import { NotificationProvider } from './notification-provider.decorator';
import { ProviderAdapter } from './provider-adapter';
import type { ProviderAdapterLookup } from './provider-adapter-lookup';

/**
 * Finds every adapter in the application at start and indexes it by provider
 * key. Fails start-up rather than guess between two adapters for one key.
 *
 * An adapter is any provider whose instance's class carries
 * `@NotificationProvider()`, whatever form registered it: a class, `useClass`,
 * `useFactory`, `useValue` or `useExisting`. Nest's own lookup by metadata key
 * sees only class providers (it reads the class before any instance exists), so
 * the registry reads the instances once they are built.
 */
@Injectable()
export class ProviderAdapterRegistry implements OnModuleInit {
  private readonly logger = new Logger(ProviderAdapterRegistry.name);
  private adapters = new Map<string, ProviderAdapter>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    // Keyed by instance: one adapter reached through several tokens (useExisting, a value provided twice) is one.
    const found = new Map<unknown, { key: string; name: string; adapter: ProviderAdapter }>();
    for (const wrapper of this.discovery.getProviders()) {
      const adapterClass = classOf(wrapper);
      if (!adapterClass) continue;
      const key: unknown = this.reflector.get(NotificationProvider.KEY, adapterClass);
      if (key === undefined) continue;
      const instance: unknown = wrapper.instance;
      if (found.has(instance)) continue;
      const name = describeProvider(adapterClass, wrapper.token);
      if (typeof key !== 'string' || key.trim() === '') {
        throw new InvalidProviderAdapterError(
          name,
          'needs a non-empty provider key in @NotificationProvider()',
        );
      }
      if (!wrapper.isDependencyTreeStatic()) {
        throw new InvalidProviderAdapterError(
          name,
          'is request-scoped (or depends on a request-scoped provider); the worker runs outside any request, so adapters must be singletons',
        );
      }
      if (!(instance instanceof ProviderAdapter)) {
        throw new InvalidProviderAdapterError(name, 'must extend ProviderAdapter');
      }
      found.set(instance, { key, name, adapter: instance });
    }

    const byKey = new Map<string, Array<{ name: string; adapter: ProviderAdapter }>>();
    for (const { key, name, adapter } of found.values()) {
      byKey.set(key, [...(byKey.get(key) ?? []), { name, adapter }]);
    }
    const adapters = new Map<string, ProviderAdapter>();
    for (const [key, list] of byKey) {
      if (list.length > 1) {
        throw new DuplicateProviderKeyError(
          key,
          list.map((entry) => entry.name),
        );
      }
      adapters.set(key, list[0].adapter);
    }
    this.adapters = adapters;
    this.logger.log({ msg: 'provider-adapters-registered', providerKeys: this.keys() });
  }

  /** The adapter serving a key, asked at the moment of use: its feature flag may change at run time. */
  lookup(providerKey: string): ProviderAdapterLookup {
    const adapter = this.adapters.get(providerKey);
    if (!adapter) return { kind: 'missing' };
    return adapter.isEnabled() ? { kind: 'enabled', adapter } : { kind: 'disabled' };
  }

  /** Every registered provider key, sorted, whatever the adapters' feature flags say. */
  keys(): string[] {
    return [...this.adapters.keys()].sort();
  }
}

type AnyClass = abstract new (...args: never[]) => unknown;

/**
 * The class to read the decorator from: the instance's own class once it is
 * built (a factory's or a value's metatype says nothing about it). A
 * request-scoped factory has not run at start and cannot be read; a class
 * provider's class is known whatever its scope, which is enough to refuse a
 * request-scoped adapter.
 */
function classOf(wrapper: InstanceWrapper): AnyClass | undefined {
  const instance: unknown = wrapper.instance;
  if (typeof instance === 'object' && instance !== null) {
    const constructor: unknown = instance.constructor;
    return typeof constructor === 'function' ? (constructor as AnyClass) : undefined;
  }
  return !wrapper.isFactory && typeof wrapper.metatype === 'function'
    ? (wrapper.metatype as AnyClass)
    : undefined;
}

/** The class, and the token when it is not the class itself: two instances of one class must be told apart. */
function describeProvider(adapterClass: AnyClass, token: InstanceWrapper['token']): string {
  if (token === adapterClass) return adapterClass.name;
  const shown =
    typeof token === 'string'
      ? JSON.stringify(token)
      : typeof token === 'symbol'
        ? token.toString()
        : token.name;
  return `${adapterClass.name} (provided as ${shown})`;
}
