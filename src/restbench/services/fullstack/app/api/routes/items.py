"""Items: every item belongs to one user; superusers may see and change all of them."""

import uuid
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query
from sqlalchemy import func, select

from ...models import Item
from ...schemas import ItemCreate, ItemPublic, ItemsPublic, ItemUpdate, Message
from ..deps import AUTH_RESPONSES, CurrentUser, SessionDep, responses

router = APIRouter(prefix="/items", tags=["items"])

# Beyond a 64-bit integer the database refuses the query; a 422 says so instead of a 500.
MAX_PAGING = 2**63 - 1
Skip = Annotated[int, Query(ge=0, le=MAX_PAGING, description="Number of items to skip (newest first)")]
Limit = Annotated[int, Query(ge=0, le=MAX_PAGING, description="Maximum number of items to return")]

ITEM_RESPONSES = responses(
    AUTH_RESPONSES,
    e403="`Not enough permissions`: the item belongs to another user",
    e404="`Item not found`",
)


@router.get("/", response_model=ItemsPublic, responses=AUTH_RESPONSES)
def read_items(session: SessionDep, current_user: CurrentUser, skip: Skip = 0, limit: Limit = 100) -> ItemsPublic:
    """Retrieve items, newest first: all items for a superuser, otherwise only the caller's.
    `count` is the number of such items before paging."""
    count_query = select(func.count()).select_from(Item)
    query = select(Item)
    if not current_user.is_superuser:
        count_query = count_query.where(Item.owner_id == current_user.id)
        query = query.where(Item.owner_id == current_user.id)
    count = session.scalar(count_query)
    items = session.scalars(query.order_by(Item.created_at.desc()).offset(skip).limit(limit)).all()
    return ItemsPublic(data=[ItemPublic.model_validate(item) for item in items], count=count)


@router.get("/{id}", response_model=ItemPublic, responses=ITEM_RESPONSES)
def read_item(session: SessionDep, current_user: CurrentUser, id: uuid.UUID) -> Item:
    """Get an item by id (owner or superuser)."""
    item = session.get(Item, id)
    if not item:
        raise HTTPException(status_code=404, detail="Item not found")
    if not current_user.is_superuser and (item.owner_id != current_user.id):
        raise HTTPException(status_code=403, detail="Not enough permissions")
    return item


@router.post("/", response_model=ItemPublic, responses=AUTH_RESPONSES)
def create_item(session: SessionDep, current_user: CurrentUser, item_in: ItemCreate) -> Item:
    """Create an item owned by the caller."""
    item = Item(title=item_in.title, description=item_in.description, owner_id=current_user.id)
    session.add(item)
    session.commit()
    return item


@router.put("/{id}", response_model=ItemPublic, responses=ITEM_RESPONSES)
def update_item(session: SessionDep, current_user: CurrentUser, id: uuid.UUID, item_in: ItemUpdate) -> Item:
    """Update an item (owner or superuser). Only the keys sent are changed."""
    item = session.get(Item, id)
    if not item:
        raise HTTPException(status_code=404, detail="Item not found")
    if not current_user.is_superuser and (item.owner_id != current_user.id):
        raise HTTPException(status_code=403, detail="Not enough permissions")
    for key, value in item_in.model_dump(exclude_unset=True).items():
        setattr(item, key, value)
    session.commit()
    return item


@router.delete("/{id}", response_model=Message, responses=ITEM_RESPONSES)
def delete_item(session: SessionDep, current_user: CurrentUser, id: uuid.UUID) -> Message:
    """Delete an item (owner or superuser)."""
    item = session.get(Item, id)
    if not item:
        raise HTTPException(status_code=404, detail="Item not found")
    if not current_user.is_superuser and (item.owner_id != current_user.id):
        raise HTTPException(status_code=403, detail="Not enough permissions")
    session.delete(item)
    session.commit()
    return Message(message="Item deleted successfully")
