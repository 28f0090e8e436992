/**
 * `onLimit: 'respond'` (the default): the module answers its own exceptions, byte for byte as bulk-limiter/express
 * does. Nest's default filter cannot: on platform-express it turns a problem+json error body into application/json.
 */
import { Catch, Inject, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { PROBLEM_CONTENT_TYPE } from '../middleware/rejection';
import { BulkLimitException } from './guard';

export class BulkLimitFilter implements ExceptionFilter<BulkLimitException> {
  constructor(private readonly host: HttpAdapterHost) {}

  catch(exception: BulkLimitException, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<unknown>();
    const adapter = this.host.httpAdapter;
    if (exception.body === undefined) return void adapter.reply(response, exception.getResponse(), exception.getStatus());
    adapter.setHeader(response, 'Content-Type', PROBLEM_CONTENT_TYPE);
    adapter.reply(response, exception.body, exception.getStatus());
  }
}

Catch(BulkLimitException)(BulkLimitFilter);
Inject(HttpAdapterHost)(BulkLimitFilter, undefined, 0);
