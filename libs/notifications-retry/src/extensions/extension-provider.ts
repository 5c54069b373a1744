import type { InjectionToken, OptionalFactoryDependency, Type } from '@nestjs/common';

/**
 * How a team supplies one extension point: any Nest provider form without
 * `provide`, which the module fills in with the extension point's class.
 *
 * - a class, or `{ useClass }`: instantiated inside the retry module;
 * - `{ useValue }`: an object with the extension point's methods;
 * - `{ useFactory, inject? }`: built from other providers;
 * - `{ useExisting }`: another provider's instance, by its token.
 *
 * What a class, a factory or `useExisting` depends on must be visible inside
 * the retry module: a global provider, or an export of a module listed in
 * `forRootAsync({ imports })`.
 */
export type NotificationsRetryExtensionProvider<T> =
  | Type<T>
  | { readonly useClass: Type<T> }
  | { readonly useValue: T }
  | {
      readonly useFactory: (...dependencies: never[]) => T | Promise<T>;
      readonly inject?: ReadonlyArray<InjectionToken | OptionalFactoryDependency>;
    }
  | { readonly useExisting: InjectionToken };
