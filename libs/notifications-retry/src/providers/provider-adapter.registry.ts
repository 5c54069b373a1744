import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { DuplicateProviderKeyError } from '../errors/duplicate-provider-key.error';
import { InvalidProviderAdapterError } from '../errors/invalid-provider-adapter.error';
import { NotificationProvider } from './notification-provider.decorator';
import { ProviderAdapter } from './provider-adapter';

/**
 * Finds every `@NotificationProvider()` class in the application at start and
 * indexes it by provider key. Fails start-up rather than guess between two
 * adapters for one key.
 */
@Injectable()
export class ProviderAdapterRegistry implements OnModuleInit {
  private readonly logger = new Logger(ProviderAdapterRegistry.name);
  private adapters = new Map<string, ProviderAdapter>();

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    const found = new Map<string, Array<{ name: string; adapter: ProviderAdapter }>>();
    for (const wrapper of this.discovery.getProviders({ metadataKey: NotificationProvider.KEY })) {
      const name = wrapper.metatype?.name ?? String(wrapper.token);
      const key = this.discovery.getMetadataByDecorator(NotificationProvider, wrapper);
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
      const instance: unknown = wrapper.instance;
      if (!(instance instanceof ProviderAdapter)) {
        throw new InvalidProviderAdapterError(name, 'must extend ProviderAdapter');
      }
      const list = found.get(key) ?? [];
      list.push({ name, adapter: instance });
      found.set(key, list);
    }

    const adapters = new Map<string, ProviderAdapter>();
    for (const [key, list] of found) {
      if (list.length > 1) {
        throw new DuplicateProviderKeyError(
          key,
          list.map((entry) => entry.name),
        );
      }
      adapters.set(key, list[0].adapter);
    }
    this.adapters = adapters;
    this.logger.log({ msg: 'provider-adapters-registered', providerKeys: [...adapters.keys()] });
  }

  /** The adapter for a key, or undefined when none serves it or its feature flag is off. */
  get(providerKey: string): ProviderAdapter | undefined {
    const adapter = this.adapters.get(providerKey);
    return adapter?.isEnabled() ? adapter : undefined;
  }

  /** True when an adapter is registered for the key, whatever its feature flag says. */
  has(providerKey: string): boolean {
    return this.adapters.has(providerKey);
  }

  keys(): string[] {
    return [...this.adapters.keys()];
  }
}
