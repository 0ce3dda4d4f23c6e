"""Who may see or change a todo."""

from .models import Todo, User


def can_access(user: User, todo: Todo) -> bool:
    """Owners may read and change their todos; admins may read and change any todo."""
    return todo.owner_id == user.id or user.is_admin
