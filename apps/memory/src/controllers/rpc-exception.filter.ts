import { Catch, type RpcExceptionFilter } from '@nestjs/common';
import { MemoryError, type MemoryErrorBody } from '@engram/contracts';
import { throwError, type Observable } from 'rxjs';

/** Every RPC failure reaches the caller as a MemoryErrorBody, never as Nest's generic error. */
@Catch()
export class MemoryRpcExceptionFilter implements RpcExceptionFilter<unknown> {
  catch(exception: unknown): Observable<never> {
    const body: MemoryErrorBody =
      exception instanceof MemoryError
        ? { code: exception.code, message: exception.message }
        : { code: 'internal', message: exception instanceof Error ? exception.message : 'internal error' };
    return throwError(() => body);
  }
}
