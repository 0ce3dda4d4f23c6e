"""The /todos endpoints. Every call needs a valid access token; todos are private to their
owner (admins may read, update and delete any todo by id, but list only their own)."""

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Path, Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from ..db import get_db
from ..deps import get_todo_user
from ..models import Todo, User
from ..permissions import can_access
from ..problems import validation_problem
from ..responses import BAD_REQUEST_EMPTY, NOT_FOUND, TODO_AUTH_ERRORS, VALIDATION_PROBLEM
from ..schemas import TodoCreate, TodoItem, TodoUpdate

router = APIRouter(
    prefix="/todos",
    tags=["todos"],
    responses=TODO_AUTH_ERRORS,
)

TodoId = Annotated[int, Path(description="Id of the todo (an integer).")]


def to_item(todo: Todo) -> TodoItem:
    return TodoItem(id=todo.id, title=todo.title, is_complete=todo.is_complete)


def validate_todo(body: TodoCreate | TodoUpdate) -> dict[str, list[str]]:
    if body.title is None or not body.title.strip():
        return {"Title": ["The Title field is required."]}
    return {}


@router.get(
    "",
    response_model=list[TodoItem],
    summary="List the caller's todos",
    description="Only the caller's own todos, for admins too. No particular order is promised.",
)
def list_todos(user: User = Depends(get_todo_user), db: Session = Depends(get_db)):
    todos = db.scalars(select(Todo).where(Todo.owner_id == user.id).order_by(Todo.id))
    return [to_item(todo) for todo in todos]


@router.get(
    "/{id}",
    response_model=TodoItem,
    summary="Get one todo",
    description="The caller's own todo, or any todo for an admin. A todo of another user "
    "answers 404, exactly like a missing one.",
    responses={400: BAD_REQUEST_EMPTY, 404: NOT_FOUND},
)
def get_todo(id: TodoId, user: User = Depends(get_todo_user),
             db: Session = Depends(get_db)):
    todo = db.get(Todo, id)
    if todo is None or not can_access(user, todo):
        raise HTTPException(status_code=404)
    return to_item(todo)


@router.post(
    "",
    status_code=201,
    response_model=TodoItem,
    summary="Create a todo",
    description="Creates a todo owned by the caller. Only `title` is used: `id` and "
    "`isComplete` in the body are ignored; the new todo gets a fresh server-assigned id "
    "(ids are never reused) and isComplete false. Answers 201 with header "
    "`Location: /todos/{id}`.",
    responses={
        201: {"description": "Created.", "headers": {"Location": {
            "description": "/todos/{id} of the new todo", "schema": {"type": "string"}}}},
        400: VALIDATION_PROBLEM | {"description": "Title missing, empty or whitespace only "
                                   "(`errors.Title`); or an unreadable body (empty body)."},
    },
)
def create_todo(body: TodoCreate, response: Response, user: User = Depends(get_todo_user),
                db: Session = Depends(get_db)):
    errors = validate_todo(body)
    if errors:
        return validation_problem(errors)
    todo = Todo(title=body.title, is_complete=False, owner_id=user.id)
    db.add(todo)
    db.commit()
    response.headers["Location"] = f"/todos/{todo.id}"
    return to_item(todo)


@router.put(
    "/{id}",
    response_class=Response,
    summary="Replace a todo",
    description="Replaces both `title` and `isComplete` (false when absent). The body's `id` "
    "must equal the path id (a missing body id counts as 0). The title is validated first, "
    "then the id, then ownership. Answers 200 with an empty body.",
    responses={
        200: {"description": "Updated (empty body)."},
        400: VALIDATION_PROBLEM | {"description": "Title missing, empty or whitespace only "
                                   "(problem body); body id differs from the path id, or "
                                   "an unreadable body or path id (empty body)."},
        404: NOT_FOUND | {"description": "No such todo, or not the caller's and the caller "
                          "is not an admin (empty body)."},
    },
)
def update_todo(id: TodoId, body: TodoUpdate, user: User = Depends(get_todo_user),
                db: Session = Depends(get_db)):
    errors = validate_todo(body)
    if errors:
        return validation_problem(errors)
    if body.id != id:
        raise HTTPException(status_code=400)
    todo = db.get(Todo, id)
    if todo is None or not can_access(user, todo):
        raise HTTPException(status_code=404)
    todo.title = body.title
    todo.is_complete = body.is_complete
    db.commit()
    return Response(status_code=200)


@router.delete(
    "/{id}",
    response_class=Response,
    summary="Delete a todo",
    description="Deletes the caller's todo (an admin may delete any todo). Answers 200 with "
    "an empty body. The id is never handed out again.",
    responses={200: {"description": "Deleted (empty body)."}, 400: BAD_REQUEST_EMPTY,
               404: NOT_FOUND | {"description": "No such todo, or not the caller's and the "
                                 "caller is not an admin (empty body)."}},
)
def delete_todo(id: TodoId, user: User = Depends(get_todo_user),
                db: Session = Depends(get_db)):
    todo = db.get(Todo, id)
    if todo is None or not can_access(user, todo):
        raise HTTPException(status_code=404)
    db.delete(todo)
    db.commit()
    return Response(status_code=200)
