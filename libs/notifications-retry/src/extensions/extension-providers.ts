import type { Abstract, InjectionToken, OptionalFactoryDependency, Provider } from '@nestjs/common';
import { AlertSink } from '../alerts/alert-sink';
import { ChannelCatalog } from '../channels/channel-catalog';
import { Clock } from '../clock/clock';
import { RandomSource } from '../clock/random-source';
import { InvalidModuleOptionsError } from '../errors/invalid-module-options.error';
import { DistributedLock } from '../locking/distributed-lock';
import { OutboxPublisher } from '../outbox/outbox-publisher';
import type { NotificationsRetryExtensions } from './notifications-retry-extensions';

interface ExtensionPoint {
  readonly token: Abstract<unknown>;
  /** What a `useValue` must have; checked now, since a value is known before anything is built. */
  readonly methods: readonly string[];
  /** Data members a `useValue` must have, each with its check and how the error names it. */
  readonly members?: ReadonlyArray<{
    readonly name: string;
    readonly shape: string;
    readonly valid: (member: unknown) => boolean;
  }>;
}

const LEASE_FENCE = {
  name: 'fence',
  shape: 'a fence ({ sql, params() })',
  valid: (fence: unknown) =>
    typeof fence === 'object' &&
    fence !== null &&
    typeof (fence as { sql?: unknown }).sql === 'string' &&
    typeof (fence as { params?: unknown }).params === 'function',
};

const EXTENSION_POINTS: Readonly<Record<keyof NotificationsRetryExtensions, ExtensionPoint>> = {
  channelCatalog: { token: ChannelCatalog, methods: ['getChannels'] },
  distributedLock: {
    token: DistributedLock,
    methods: ['acquire', 'release'],
    members: [LEASE_FENCE],
  },
  clock: { token: Clock, methods: ['now'] },
  randomSource: { token: RandomSource, methods: ['next'] },
  alertSink: { token: AlertSink, methods: ['terminalFailure'] },
  outboxPublisher: { token: OutboxPublisher, methods: ['publish'] },
};

const FORMS = ['useClass', 'useValue', 'useFactory', 'useExisting'] as const;

const FORMS_REQUIREMENT =
  'must be a class, { useClass }, { useValue }, { useFactory, inject? } or { useExisting } ' +
  '(exactly one of them; the module fills in provide)';

/**
 * The providers that replace the module's defaults, registered after them
 * under the same tokens. Checked here, when `forRoot`/`forRootAsync` is called:
 * Nest's own message for a malformed provider names neither the option nor the
 * value.
 */
export function extensionProviders(
  extensions: NotificationsRetryExtensions | undefined,
): Provider[] {
  const given: unknown = extensions;
  if (given === undefined) return [];
  if (!isRecord(given)) {
    throw new InvalidModuleOptionsError(
      'extensions',
      given,
      `must be an object whose keys are extension points (${Object.keys(EXTENSION_POINTS).join(', ')})`,
    );
  }
  const providers: Provider[] = [];
  for (const [name, value] of Object.entries(given)) {
    const option = `extensions.${name}`;
    if (!Object.hasOwn(EXTENSION_POINTS, name)) {
      throw new InvalidModuleOptionsError(
        option,
        value,
        `is not an extension point (${Object.keys(EXTENSION_POINTS).join(', ')})`,
      );
    }
    if (value === undefined) continue;
    providers.push(
      extensionProvider(
        option,
        EXTENSION_POINTS[name as keyof NotificationsRetryExtensions],
        value,
      ),
    );
  }
  return providers;
}

function extensionProvider(option: string, point: ExtensionPoint, value: unknown): Provider {
  const provide = point.token;
  if (isClass(value)) return { provide, useClass: value };
  if (!isRecord(value)) {
    throw new InvalidModuleOptionsError(
      option,
      value,
      typeof value === 'function'
        ? `${FORMS_REQUIREMENT}; a factory function goes in { useFactory }`
        : FORMS_REQUIREMENT,
    );
  }
  if ('provide' in value) {
    throw new InvalidModuleOptionsError(
      `${option}.provide`,
      value.provide,
      `is filled in by the module (${point.token.name}); leave it out`,
    );
  }
  const forms = FORMS.filter((form) => form in value);
  const allowed: readonly string[] = forms[0] === 'useFactory' ? ['useFactory', 'inject'] : forms;
  if (forms.length !== 1 || Object.keys(value).some((key) => !allowed.includes(key))) {
    throw new InvalidModuleOptionsError(option, value, FORMS_REQUIREMENT);
  }
  switch (forms[0]) {
    case 'useClass':
      if (!isClass(value.useClass))
        throw new InvalidModuleOptionsError(
          `${option}.useClass`,
          value.useClass,
          'must be a class',
        );
      return { provide, useClass: value.useClass };
    case 'useValue':
      return { provide, useValue: checkedValue(`${option}.useValue`, point, value.useValue) };
    case 'useFactory':
      return {
        provide,
        useFactory: checkedFactory(`${option}.useFactory`, value.useFactory),
        inject: checkedInject(`${option}.inject`, value.inject),
      };
    case 'useExisting':
      if (!isToken(value.useExisting)) {
        throw new InvalidModuleOptionsError(
          `${option}.useExisting`,
          value.useExisting,
          'must be an injection token (a class, a string or a symbol)',
        );
      }
      return { provide, useExisting: value.useExisting };
  }
}

function checkedValue(option: string, point: ExtensionPoint, value: unknown): object {
  const shaped =
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    point.methods.every(
      (method) => typeof (value as Record<string, unknown>)[method] === 'function',
    ) &&
    (point.members ?? []).every((member) =>
      member.valid((value as Record<string, unknown>)[member.name]),
    );
  if (!shaped) {
    const parts = [
      ...point.methods.map((m) => `${m}()`),
      ...(point.members ?? []).map((member) => member.shape),
    ];
    throw new InvalidModuleOptionsError(
      option,
      value,
      `must be a ${point.token.name}: an object with ${parts.join(', ')}`,
    );
  }
  return value;
}

function checkedFactory(option: string, factory: unknown): (...dependencies: unknown[]) => unknown {
  if (typeof factory !== 'function') {
    throw new InvalidModuleOptionsError(option, factory, 'must be a function');
  }
  return factory as (...dependencies: unknown[]) => unknown;
}

function checkedInject(
  option: string,
  inject: unknown,
): Array<InjectionToken | OptionalFactoryDependency> {
  if (inject === undefined) return [];
  const tokens =
    Array.isArray(inject) &&
    inject.every(
      (item: unknown) =>
        isToken(item) || (isRecord(item) && 'token' in item && isToken(item.token)),
    );
  if (!tokens) {
    throw new InvalidModuleOptionsError(option, inject, 'must be an array of injection tokens');
  }
  return [...(inject as Array<InjectionToken | OptionalFactoryDependency>)];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Newable: arrow and async functions have no prototype, so a factory passed bare is not taken for a class. */
function isClass(value: unknown): value is new (...args: never[]) => object {
  return typeof value === 'function' && value.prototype !== undefined;
}

function isToken(value: unknown): value is InjectionToken {
  return typeof value === 'string' || typeof value === 'symbol' || typeof value === 'function';
}
