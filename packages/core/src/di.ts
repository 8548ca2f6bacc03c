/**
 * @module tsyringe, loaded after its Reflect polyfill. Core files import DI from here so the
 * polyfill is in place whatever module a host imports first.
 */
import 'reflect-metadata';
export { container, inject, injectable, instanceCachingFactory, type DependencyContainer } from 'tsyringe';
